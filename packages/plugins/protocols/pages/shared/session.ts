// What both pages keep outside React: the gateway API key (session storage, never the URL) and the thread id
// (the URL's `?thread=`, so a reload lands on the same thread and can rejoin its run).

const KEY_ITEM = "antler.pages.apiKey";

export function storedApiKey(): string | null {
  return sessionStorage.getItem(KEY_ITEM);
}

export function storeApiKey(key: string): void {
  sessionStorage.setItem(KEY_ITEM, key);
}

/** The thread in the URL, or null for a page opened without one. */
export function threadIdFromUrl(): string | null {
  return new URL(location.href).searchParams.get("thread");
}

export function putThreadIdInUrl(threadId: string): void {
  const url = new URL(location.href);
  url.searchParams.set("thread", threadId);
  history.replaceState(null, "", url);
}

/** The gateway these pages talk to: the origin that served them, unless `?gateway=` names another. */
export function gatewayUrl(): string {
  return new URL(location.href).searchParams.get("gateway") ?? location.origin;
}
