// The authenticated user of a request, as kube-apiserver describes users (user.Info).
export interface UserInfo {
  username: string;
  uid?: string;
  groups: string[];
  extra: Record<string, string[]>;
}
