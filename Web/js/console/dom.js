// A small helper to build the console's DOM: text always goes in as text, never as HTML.

/** Makes an element with attributes (`on…` functions become listeners) and children. */
export function h(tag, attributes = {}, ...children) {
  const element = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) {
    if (value === undefined || value === null || value === false) continue;
    if (name.startsWith("on") && typeof value === "function") element.addEventListener(name.slice(2), value);
    else if (name === "dataset") Object.assign(element.dataset, value);
    else element.setAttribute(name, value === true ? "" : String(value));
  }
  append(element, children);
  return element;
}

function append(element, children) {
  for (const child of children.flat()) {
    if (child === undefined || child === null || child === false) continue;
    element.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
}

/** An SVG element with attributes and children. */
export function svg(tag, attributes = {}, ...children) {
  const element = document.createElementNS("http://www.w3.org/2000/svg", tag);
  for (const [name, value] of Object.entries(attributes)) {
    if (value !== undefined && value !== null) element.setAttribute(name, String(value));
  }
  append(element, children);
  return element;
}

/** Seconds as `1:05` or `1:02:05`. */
export function duration(seconds) {
  const total = Math.max(0, Math.round(seconds));
  const hours = Math.floor(total / 3600);
  const minutes = Math.floor((total % 3600) / 60);
  const rest = String(total % 60).padStart(2, "0");
  return hours ? `${hours}:${String(minutes).padStart(2, "0")}:${rest}` : `${minutes}:${rest}`;
}

/** Seconds since 1970 as a local date and time. */
export function when(seconds) {
  return new Date(seconds * 1000).toLocaleString();
}

/** Milliseconds as `640 ms`, or a dash. */
export function ms(value) {
  return value === undefined || value === null ? "–" : `${Math.round(value)} ms`;
}

/** A heading and an error line for a view that could not load. */
export function failure(error) {
  return h("p", { class: "error", role: "alert" }, error.message);
}
