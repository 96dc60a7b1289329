// An object's apiVersion and its group and version, both ways: the core group is '' and its
// apiVersion is the version alone ("v1"), every other is "<group>/<version>".

/** The group and version of an apiVersion ("apps/v1" → apps, v1; "v1" → '', v1). */
export function splitApiVersion(apiVersion: string): { group: string; version: string } {
  const i = apiVersion.indexOf('/');
  return i < 0 ? { group: '', version: apiVersion } : { group: apiVersion.slice(0, i), version: apiVersion.slice(i + 1) };
}

/** The apiVersion of a group and version (the inverse of splitApiVersion). */
export function joinApiVersion(group: string, version: string): string {
  return group ? `${group}/${version}` : version;
}
