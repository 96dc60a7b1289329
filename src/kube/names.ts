// The syntax of names and labels as k8s.io/apimachinery/pkg/util/validation checks it, with its
// messages: DNS-1123 subdomains (object names, label key prefixes), qualified names (label keys)
// and label values. Each `…Errors` function returns kube's messages, none when the value is valid.

const DNS1123_SUBDOMAIN_FMT = '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*';
const QUALIFIED_NAME_FMT = '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]';
const LABEL_VALUE_FMT = `(${QUALIFIED_NAME_FMT})?`;

const DNS1123_SUBDOMAIN = new RegExp(`^${DNS1123_SUBDOMAIN_FMT}$`);
const QUALIFIED_NAME = new RegExp(`^${QUALIFIED_NAME_FMT}$`);
const LABEL_VALUE = new RegExp(`^${LABEL_VALUE_FMT}$`);

const QUALIFIED_NAME_MSG = "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character";

/** validation.RegexError. */
function regexError(msg: string, fmt: string, ...examples: string[]): string {
  return `${msg} (e.g. ${examples.map((e) => `'${e}', `).join(' or ')}regex used for validation is '${fmt}')`;
}
const maxLenError = (n: number) => `must be no more than ${n} characters`;
const qualifiedNameRegexError = () => regexError(QUALIFIED_NAME_MSG, QUALIFIED_NAME_FMT, 'MyName', 'my.name', '123-abc');

/** validation.IsDNS1123Subdomain. */
export function dns1123SubdomainErrors(value: string): string[] {
  const errs: string[] = [];
  if (value.length > 253) errs.push(maxLenError(253));
  if (!DNS1123_SUBDOMAIN.test(value)) {
    errs.push(regexError("a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character",
      DNS1123_SUBDOMAIN_FMT, 'example.com'));
  }
  return errs;
}

export function isDNS1123Subdomain(value: string): boolean {
  return dns1123SubdomainErrors(value).length === 0;
}

const DNS1123_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;

/** validation.IsDNS1123Label (namespace and Service names): at most 63 characters, no dots. */
export function isDNS1123Label(value: string): boolean {
  return value.length <= 63 && DNS1123_LABEL.test(value);
}

/** validation.IsQualifiedName: `[prefix/]name`, which is what a label key is. */
export function qualifiedNameErrors(value: string): string[] {
  const parts = value.split('/');
  if (parts.length > 2) {
    return [`a qualified name ${qualifiedNameRegexError()} with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')`];
  }
  const errs: string[] = [];
  const name = parts.at(-1)!;
  if (parts.length === 2) {
    const prefix = parts[0]!;
    if (prefix === '') errs.push('prefix part must be non-empty');
    else errs.push(...dns1123SubdomainErrors(prefix).map((m) => `prefix part ${m}`));
  }
  if (name === '') errs.push('name part must be non-empty');
  else if (name.length > 63) errs.push(`name part ${maxLenError(63)}`);
  if (!QUALIFIED_NAME.test(name)) errs.push(`name part ${qualifiedNameRegexError()}`);
  return errs;
}

/** validation.IsValidLabelValue (the empty string is a valid value). */
export function labelValueErrors(value: string): string[] {
  const errs: string[] = [];
  if (value.length > 63) errs.push(maxLenError(63));
  if (!LABEL_VALUE.test(value)) {
    errs.push(regexError("a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character",
      LABEL_VALUE_FMT, 'MyValue', 'my_value', '12345'));
  }
  return errs;
}
