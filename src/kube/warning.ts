// Warning headers as kube-apiserver writes them, for an answer that succeeded with a problem the
// client should hear of (kubectl prints each one as `Warning: <text>`): warn-code 299, agent `-`,
// the text quoted (k8s.io/apimachinery's NewWarningHeader). As k8s.io/apiserver's recorder cuts a
// text at 256 characters when warnings grow long, each text here is cut there; callers bound how
// many they send. Characters outside printable ASCII are escaped (\uXXXX, which Go's Unquote in
// client-go reads back), since a header value carries bytes, not Unicode.

export const MAX_WARNING_CHARS = 256;

export function warningHeader(text: string): string {
  const cut = [...text].length > MAX_WARNING_CHARS ? [...text].slice(0, MAX_WARNING_CHARS).join('') : text;
  const quoted = JSON.stringify(cut).replace(/[^\x20-\x7e]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
  return `299 - ${quoted}`;
}
