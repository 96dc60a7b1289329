// metav1.LabelSelector as Kubernetes evaluates it (LabelSelectorAsSelector): every matchLabels pair
// and every matchExpressions requirement must hold; `{}` matches everything; operators In, NotIn,
// Exists, DoesNotExist. A malformed selector (unknown operator, In/NotIn without values,
// Exists/DoesNotExist with values) is a LabelSelectorError, which callers report (e.g. on a
// BindingPolicy's status) instead of treating it as "matches nothing".

export interface LabelSelectorRequirement {
  key: string;
  operator: string;
  values?: string[];
}

export interface LabelSelector {
  matchLabels?: Record<string, string>;
  matchExpressions?: LabelSelectorRequirement[];
}

export type Labels = Readonly<Record<string, string>>;

export class LabelSelectorError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'LabelSelectorError';
  }
}

/** Throws LabelSelectorError for a selector Kubernetes would refuse; `path` names it in the message. */
export function validateLabelSelector(sel: LabelSelector, path = 'selector'): void {
  (sel.matchExpressions ?? []).forEach((r, i) => {
    const at = `${path}.matchExpressions[${i}]`;
    const values = r.values ?? [];
    switch (r.operator) {
      case 'In':
      case 'NotIn':
        if (values.length === 0) throw new LabelSelectorError(`${at}.values: Required value: must be specified when \`operator\` is 'In' or 'NotIn'`);
        break;
      case 'Exists':
      case 'DoesNotExist':
        if (values.length > 0) throw new LabelSelectorError(`${at}.values: Forbidden: may not be specified when \`operator\` is 'Exists' or 'DoesNotExist'`);
        break;
      default:
        throw new LabelSelectorError(`${at}.operator: Invalid value: ${JSON.stringify(r.operator)}: not a valid selector operator`);
    }
  });
}

export function matchesLabelSelector(sel: LabelSelector, labels: Labels): boolean {
  validateLabelSelector(sel);
  for (const [k, v] of Object.entries(sel.matchLabels ?? {})) if (labels[k] !== v) return false;
  for (const r of sel.matchExpressions ?? []) {
    const has = Object.hasOwn(labels, r.key);
    const values = r.values ?? [];
    switch (r.operator) {
      case 'In':
        if (!has || !values.includes(labels[r.key]!)) return false;
        break;
      case 'NotIn':
        if (has && values.includes(labels[r.key]!)) return false;
        break;
      case 'Exists':
        if (!has) return false;
        break;
      case 'DoesNotExist':
        if (has) return false;
        break;
    }
  }
  return true;
}

/** Whether a selector is `{}` (no requirement at all). */
export function isEmptySelector(sel: LabelSelector): boolean {
  return Object.keys(sel.matchLabels ?? {}).length === 0 && (sel.matchExpressions ?? []).length === 0;
}
