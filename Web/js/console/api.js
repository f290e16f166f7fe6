// The console's calls to /v1/console/…, with the token kept in this tab's sessionStorage.

const TOKEN_KEY = "parley-console-token";

/** The token this tab signed in with, or null. */
export function storedToken() {
  return sessionStorage.getItem(TOKEN_KEY);
}

/** Keeps (or forgets, with null) the token for this tab. */
export function storeToken(token) {
  if (token) sessionStorage.setItem(TOKEN_KEY, token);
  else sessionStorage.removeItem(TOKEN_KEY);
}

/** An error the server answered with: its status, code and message. */
export class APIError extends Error {
  constructor(status, code, message) {
    super(message);
    this.status = status;
    this.code = code;
  }
}

/** Calls the console API; resolves to the parsed JSON, rejects with an APIError. */
export async function api(path, { method = "GET", body, token = storedToken() } = {}) {
  const headers = { Authorization: `Bearer ${token ?? ""}` };
  if (body !== undefined) headers["Content-Type"] = "application/json";
  const response = await fetch(`/v1/console${path}`, {
    method, headers, body: body === undefined ? undefined : JSON.stringify(body), cache: "no-store",
  });
  const json = await response.json().catch(() => null);
  if (!response.ok) {
    throw new APIError(response.status, json?.error?.code ?? "error", json?.error?.message ?? `The server answered ${response.status}.`);
  }
  return json;
}

/** Fetches a binary resource of the console API (a recording). */
export async function fetchBytes(url) {
  const response = await fetch(url, { headers: { Authorization: `Bearer ${storedToken() ?? ""}` }, cache: "no-store" });
  if (!response.ok) throw new APIError(response.status, "recording_unavailable", `The recording could not be fetched (${response.status}).`);
  return response.arrayBuffer();
}
