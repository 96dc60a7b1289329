// The label and field selectors of a list or watch on this server's own resources (spaces,
// bindings, combinedstatuses), as kube-apiserver applies them: parsed once per request, a
// malformed selector or an unsupported field label is a 400 Status with kube's message.
import { fieldSelectorMatcher, FieldSelectorError } from '../../kube/field-selector.js';
import { LabelSelectorError, matchesRequirements, parseLabelSelector } from '../../kube/label-selector.js';
import { errors } from '../../kube/status.js';

export type ObjectFilter = (labels: Readonly<Record<string, string>>, fields: Readonly<Record<string, string>>) => boolean;

/** The test of both selectors; `fields` are the field labels the resource supports. */
export function objectFilter(labelSelector: string | undefined, fieldSelector: string | undefined, fields: readonly string[]): ObjectFilter {
  try {
    const byLabels = parseLabelSelector(labelSelector ?? '');
    const byFields = fieldSelectorMatcher(fieldSelector ?? '', fields);
    return (l, f) => byFields(f) && matchesRequirements(byLabels, l);
  } catch (err) {
    if (err instanceof LabelSelectorError || err instanceof FieldSelectorError) throw errors.badRequest(err.message);
    throw err;
  }
}
