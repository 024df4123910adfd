/**
 * Whether an owner with `live` live tasks (not terminal, not expired) gets a new one under its
 * limit `maxLive` (`Infinity`: no limit). Terminal and expired tasks never count. Stores decide it
 * atomically with the insert (the SQL store under the owner's advisory lock), so concurrent
 * creates never overshoot.
 */
export function decideQuota(live: number, maxLive: number): { readonly kind: 'create' } | { readonly kind: 'refuse' } {
  return Number.isFinite(maxLive) && live >= maxLive ? { kind: 'refuse' } : { kind: 'create' };
}
