/** A service's configuration: the given fields over the defaults (an explicit `undefined` keeps the default). */
export function withDefaults<T extends object>(defaults: Required<T>, config: T): Required<T> {
  const given = Object.fromEntries(Object.entries(config).filter(([, value]) => value !== undefined));
  return { ...defaults, ...given } as Required<T>;
}
