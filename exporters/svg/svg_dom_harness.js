// svg_dom_harness.js -- runs a flame graph's embedded script on a minimal
// fake DOM (node has none) and reports what zoom and search did.
// Input (stdin): {"svg": element tree, "clicks": [frame index | null, ...],
// "search": term}. Element tree nodes: {tag, attrs, text, children};
// namespaced attribute names are "{ns}local". Output (stdout): JSON.
"use strict";
const vm = require("vm");

class El {
  constructor(n, parent) {
    this.tag = n.tag.replace(/^\{[^}]*\}/, "");
    this.attrs = Object.assign({}, n.attrs);
    this.parentNode = parent;
    this.listeners = {};
    this.children = n.children.map((c) => new El(c, this));
    this.text = n.text || "";
    this.firstChild = { nodeValue: this.text };
    const self = this;
    this.classList = {
      add(c) { const s = self.cls(); s.add(c); self.attrs["class"] = [...s].join(" "); },
      remove(c) { const s = self.cls(); s.delete(c); self.attrs["class"] = [...s].join(" "); },
      contains(c) { return self.cls().has(c); },
    };
  }
  cls() { return new Set((this.attrs["class"] || "").split(" ").filter(Boolean)); }
  getAttribute(a) { return a in this.attrs ? this.attrs[a] : null; }
  getAttributeNS(ns, a) { return this.getAttribute("{" + ns + "}" + a); }
  setAttribute(a, v) { this.attrs[a] = String(v); }
  hasAttribute(a) { return a in this.attrs; }
  removeAttribute(a) { delete this.attrs[a]; }
  querySelector(t) {
    for (const c of this.children) {
      if (c.tag === t) return c;
      const r = c.querySelector(t);
      if (r) return r;
    }
    return null;
  }
  get textContent() { return this.children.length ? this.children.map((c) => c.textContent).join("") : this.firstChild.nodeValue; }
  set textContent(v) { this.children = []; this.firstChild.nodeValue = v; }
  addEventListener(ev, fn) { (this.listeners[ev] = this.listeners[ev] || []).push(fn); }
  fire(ev, target) { (this.listeners[ev] || []).forEach((fn) => fn({ target, preventDefault() {} })); }
  byId(id) {
    if (this.attrs.id === id) return this;
    for (const c of this.children) { const r = c.byId(id); if (r) return r; }
    return null;
  }
}

const input = JSON.parse(require("fs").readFileSync(0, "utf8"));
const root = new El(input.svg, null);
const script = root.querySelector("script").firstChild.nodeValue;
const win = new El({ tag: "window", attrs: {}, children: [] }, null);
const ctx = {
  document: { documentElement: root, getElementById: (id) => root.byId(id) },
  window: win,
  prompt: () => input.search,
  Math, RegExp, Number, String,
};
vm.createContext(ctx);
vm.runInContext(script, ctx);
ctx.init({});
const frames = root.byId("frames");
const snap = () => frames.children.map((g) => {
  const r = g.querySelector("rect");
  return { x: +r.getAttribute("x"), w: +r.getAttribute("width"), cls: g.getAttribute("class"),
           fill: r.getAttribute("fill"), label: g.querySelector("text").textContent };
});
const out = { states: [] };
for (const c of input.clicks) {
  if (c === null) root.byId("unzoom").fire("click", root.byId("unzoom"));
  else frames.fire("click", frames.children[c].querySelector("rect"));
  out.states.push({ frames: snap(), unzoom: root.byId("unzoom").getAttribute("class") || "" });
}
// hovering shows the frame's title in the details line
frames.fire("mouseover", frames.children[0].querySelector("rect"));
out.details = root.byId("details").firstChild.nodeValue;
root.byId("search").fire("click", root.byId("search"));
out.search = snap();
out.matched = root.byId("matched").firstChild.nodeValue;
process.stdout.write(JSON.stringify(out));
