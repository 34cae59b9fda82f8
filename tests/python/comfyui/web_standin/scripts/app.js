// A stand-in for ComfyUI's scripts/app.js, enough to load and drive a front-end
// extension in a browser page without ComfyUI (tests/python/comfyui/test_comfyui_web.py).
//
// What ComfyUI's `app` offers that archfit.js uses:
//   app.registerExtension(ext)            records the extension
//   app.extensionManager.toast.add(opts)  ComfyUI's documented toast API
//                                         ({severity, summary, detail, life})
// and, for the test, helpers that do what ComfyUI's app does at start-up and
// when it registers a node type: run each extension's setup() and
// beforeRegisterNodeDef(nodeType, nodeData).

const extensions = [];
const toasts = [];

function toastArea() {
  let area = document.getElementById("standin-toasts");
  if (!area) {
    area = document.createElement("div");
    area.id = "standin-toasts";
    // ComfyUI's toasts sit at the top right, above the dialogs.
    area.style.cssText =
      "position:fixed;top:12px;right:12px;z-index:20000;display:flex;flex-direction:column;" +
      "gap:8px;width:420px;font:13px sans-serif;";
    document.body.append(area);
  }
  return area;
}

const toast = {
  // Records the toast and shows it, so a screenshot of the page has it.
  add(options) {
    toasts.push(JSON.parse(JSON.stringify(options)));
    const element = document.createElement("div");
    element.className = `standin-toast standin-toast-${options.severity}`;
    const colour = options.severity === "error" ? "#c44" : options.severity === "warn" ? "#c93" : "#49c";
    element.style.cssText =
      `background:#2a2a2a;color:#eee;border-left:6px solid ${colour};border-radius:6px;` +
      "padding:10px 12px;box-shadow:0 2px 8px #0008;white-space:pre-wrap;";
    const summary = document.createElement("div");
    summary.className = "standin-toast-summary";
    summary.style.cssText = "font-weight:bold;margin-bottom:4px;";
    summary.textContent = options.summary ?? "";
    const detail = document.createElement("div");
    detail.className = "standin-toast-detail";
    detail.textContent = options.detail ?? "";
    element.append(summary, detail);
    toastArea().append(element);
  },
  removeAll() {},
};

export const app = {
  extensions,
  extensionManager: { toast },
  registerExtension(extension) {
    if (!extension?.name) throw new Error("an extension needs a name");
    if (extensions.some((e) => e.name === extension.name))
      throw new Error(`extension ${extension.name} registered twice`);
    extensions.push(extension);
  },
};

// For the test (window.standin): what the page has seen and how to drive it.
export const standin = {
  toasts,
  extensions,
  // ComfyUI's app.setup() awaits each extension's setup(app).
  async setupExtensions() {
    for (const extension of extensions) await extension.setup?.(app);
  },
  // ComfyUI's registerNodeDef awaits beforeRegisterNodeDef(nodeType, nodeData, app)
  // on every extension before the node type is registered with LiteGraph.
  async registerNodeDef(nodeType, nodeData) {
    for (const extension of extensions)
      await extension.beforeRegisterNodeDef?.(nodeType, nodeData, app);
    return nodeType;
  },
};
