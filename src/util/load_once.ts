/** Loading something once per id, shared by everyone who asks while it loads or after. */

/** The value `open` makes for `id`, made once and shared; a failure is forgotten, so that the next call tries again. */
export function loadOnce<T>(loads: Map<string, Promise<T>>, id: string, open: () => Promise<T>): Promise<T> {
  let loading = loads.get(id);
  if (loading === undefined) {
    loading = open();
    loads.set(id, loading);
    loading.catch(() => loads.delete(id));
  }
  return loading;
}
