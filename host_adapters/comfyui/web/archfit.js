// archfit's front end for ComfyUI: a toast when a prompt fails for a reason
// archfit knows (a CUDA, driver or GPU-arch problem, or archfit's own
// Pre-flight stopping the workflow), a details dialog when asked, and the
// Pre-flight node's answer drawn on the node.
//
// What it shows and when:
// - Only what the back end recognised: a payload carries a `toast` ({title,
//   cause, command, step}) only then; everything else is ComfyUI's own
//   error dialog's, and archfit stays silent.
// - One toast per distinct diagnosis: the same one again (the push and the
//   POST answer of one error, or the same failure re-run) while its toast is
//   up only flashes that toast.
// - Toasts and the dialog sit under ComfyUI's dialogs (PrimeVue starts its
//   overlays at z-index 1100), so nothing of archfit ever covers ComfyUI's
//   own error dialog; the details dialog opens only when asked, one at a
//   time, closes with Escape, and keeps the full text collapsed.
//
// Diagnoses come two ways: pushed by the back end as "archfit.diagnosis" to
// the client that queued the prompt, or, when ComfyUI's "execution_error"
// arrives and no push follows soon (a page that reconnected, an error the
// log handler did not see), asked for: first what the back end kept for the
// prompt (GET /archfit/diagnoses), then POST /archfit/explain.
import { app } from "../../scripts/app.js";
import { api } from "../../scripts/api.js";

const PUSH_GRACE_MS = 1500;
const MAX_TOASTS = 3;
const Z_INDEX = 1000; // under PrimeVue's overlays (1100 and up)
// The message ComfyUI sends when a node's output was an ExecutionBlocker
// made by archfit's Pre-flight ("Execution Blocked: " + the blocker's).
const OWN_BLOCK = "Execution Blocked: archfit:";

const toastsOnScreen = new Map(); // toast key -> element
const answeredPrompts = new Set(); // prompt ids a push has answered

function keyOf(toast) {
  return `${toast.title}\u0000${toast.command || toast.step}`;
}

function element(tag, className, text) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined) node.textContent = text;
  return node;
}

const STYLE = `
.archfit-toasts{position:fixed;right:16px;bottom:16px;z-index:${Z_INDEX};display:flex;
  flex-direction:column;gap:8px;max-width:min(460px,calc(100vw - 32px));font:13px sans-serif}
.archfit-toast{background:var(--comfy-menu-bg,#202020);color:var(--fg-color,#ddd);
  border:1px solid var(--border-color,#444);border-left:4px solid #e5484d;border-radius:6px;
  padding:10px 12px;box-shadow:0 4px 16px rgba(0,0,0,.4)}
.archfit-toast.archfit-flash{animation:archfit-flash .6s}
@keyframes archfit-flash{50%{border-left-color:#ffb4b4}}
.archfit-title{font-weight:600;margin:0 0 4px;padding-right:20px}
.archfit-cause{opacity:.85;margin:0 0 6px;overflow:hidden;display:-webkit-box;
  -webkit-line-clamp:3;-webkit-box-orient:vertical}
.archfit-command{display:flex;gap:6px;align-items:flex-start;margin:0 0 6px}
.archfit-command code{flex:1;background:rgba(0,0,0,.35);padding:4px 6px;border-radius:4px;
  font:12px monospace;white-space:pre-wrap;word-break:break-all;user-select:all}
.archfit-actions{display:flex;gap:8px;justify-content:flex-end}
.archfit-toast button,.archfit-dialog button{background:transparent;color:inherit;
  border:1px solid var(--border-color,#555);border-radius:4px;padding:2px 8px;cursor:pointer}
.archfit-toast .archfit-close{position:absolute;border:none;font-size:16px;line-height:1}
.archfit-toast{position:relative}
.archfit-toast .archfit-close{top:4px;right:6px}
.archfit-dialog{position:fixed;top:10vh;left:50%;transform:translateX(-50%);
  width:min(760px,calc(100vw - 48px));max-height:80vh;box-sizing:border-box;
  z-index:${Z_INDEX + 1};overflow:auto;box-shadow:0 8px 32px rgba(0,0,0,.5);
  background:var(--comfy-menu-bg,#1e1e1e);color:var(--fg-color,#ddd);
  border:1px solid var(--border-color,#555);border-radius:8px;padding:16px;font:13px sans-serif}
.archfit-dialog pre{white-space:pre-wrap;font:12px monospace}
.archfit-dialog details{margin:8px 0}
.archfit-dialog .archfit-dialog-close{float:right}
`;

function ensureStyle() {
  if (document.getElementById("archfit-style")) return;
  const style = element("style", "", STYLE);
  style.id = "archfit-style";
  document.head.append(style);
}

function toastArea() {
  let area = document.querySelector(".archfit-toasts");
  if (!area) {
    ensureStyle();
    area = element("div", "archfit-toasts");
    area.setAttribute("aria-live", "polite");
    document.body.append(area);
  }
  return area;
}

// The command with a Copy button, or the first step in words.
function actionOf(toast) {
  if (toast.command) {
    const row = element("div", "archfit-command");
    const code = element("code", "", toast.command);
    const copy = element("button", "archfit-copy", "Copy");
    copy.onclick = async () => {
      try {
        await navigator.clipboard.writeText(toast.command);
        copy.textContent = "Copied";
      } catch {
        // No clipboard (plain http on another host): the text is selectable.
        window.getSelection()?.selectAllChildren(code);
      }
    };
    row.append(code, copy);
    return row;
  }
  return element("div", "archfit-cause", toast.step || "");
}

// ComfyUI's own dialogs (PrimeVue's, and the legacy .comfy-modal) on screen.
function comfyDialogOpen() {
  return [...document.querySelectorAll(".p-dialog, .comfy-modal")].some(
    (dialog) => !dialog.closest(".archfit-dialog") && dialog.getClientRects().length > 0,
  );
}

let closeOpenDialog = null;

// The details of one payload: title, cause, command, then the full text
// collapsed. One at a time; Escape or Close closes it; never opened over
// ComfyUI's own dialog (returns null then).
export function showDetails(payload) {
  if (comfyDialogOpen()) return null;
  closeOpenDialog?.();
  ensureStyle();
  const toast = payload.toast ?? { title: "archfit", cause: "", command: "", step: "" };
  const dialog = element("div", "archfit-dialog");
  dialog.setAttribute("role", "dialog");
  dialog.setAttribute("aria-modal", "true");
  const title = element("h3", "archfit-title", toast.title);
  title.id = "archfit-dialog-title";
  dialog.setAttribute("aria-labelledby", title.id);
  const details = element("details", "archfit-details");
  details.append(element("summary", "", "Full diagnosis"),
                 element("pre", "archfit-dialog-text", payload.text ?? ""));
  const close = element("button", "archfit-dialog-close", "Close");
  const onKey = (event) => {
    if (event.key !== "Escape" || comfyDialogOpen()) return;
    event.stopPropagation();
    closeOpenDialog?.();
  };
  closeOpenDialog = () => {
    dialog.remove();
    window.removeEventListener("keydown", onKey, true);
    closeOpenDialog = null;
  };
  close.onclick = () => closeOpenDialog?.();
  window.addEventListener("keydown", onKey, true);
  dialog.append(title, element("p", "archfit-cause", toast.cause), actionOf(toast), details, close);
  document.body.append(dialog);
  close.focus();
  return dialog;
}

// A toast for a payload archfit recognised; false when it showed none (not
// recognised, or the same one is already up and only flashed).
export function showDiagnosis(payload) {
  const toast = payload?.toast;
  if (!toast?.title) return false;
  const key = keyOf(toast);
  const existing = toastsOnScreen.get(key);
  if (existing?.isConnected) {
    existing.classList.remove("archfit-flash");
    void existing.offsetWidth; // restart the animation
    existing.classList.add("archfit-flash");
    return false;
  }
  const area = toastArea();
  const card = element("div", "archfit-toast");
  card.setAttribute("role", "alert");
  const dismiss = element("button", "archfit-close", "×");
  dismiss.setAttribute("aria-label", "Dismiss");
  dismiss.onclick = () => card.remove();
  const detailsButton = element("button", "archfit-details-button", "Details");
  detailsButton.onclick = () => showDetails(payload);
  const actions = element("div", "archfit-actions");
  actions.append(detailsButton);
  card.append(dismiss, element("div", "archfit-title", toast.title),
              element("div", "archfit-cause", toast.cause), actionOf(toast), actions);
  area.append(card);
  toastsOnScreen.set(key, card);
  while (area.children.length > MAX_TOASTS) area.firstElementChild.remove();
  return true;
}

function received(payload) {
  if (payload?.prompt_id) answeredPrompts.add(payload.prompt_id);
  showDiagnosis(payload);
}

function clientId() {
  return api.clientId ?? api.initialClientId ?? null;
}

async function kept(promptId) {
  const id = clientId();
  if (!promptId || !id) return [];
  const query = new URLSearchParams({ prompt_id: promptId, client_id: id });
  const response = await api.fetchApi(`/archfit/diagnoses?${query}`);
  return response.ok ? await response.json() : [];
}

async function explainExecutionError(detail) {
  await new Promise((resolve) => setTimeout(resolve, PUSH_GRACE_MS));
  // The push can come just before ComfyUI's execution_error as well as
  // after it: the handler diagnoses on a worker thread while the executor
  // goes on, and both are queued on the server's loop as they are ready.
  if (answeredPrompts.has(detail.prompt_id)) return;
  try {
    const payloads = await kept(detail.prompt_id);
    if (payloads.length) {
      payloads.forEach(received);
      return;
    }
    // archfit's own block was told when Pre-flight ran; nothing to explain.
    if (String(detail.exception_message ?? "").startsWith(OWN_BLOCK)) return;
    const response = await api.fetchApi("/archfit/explain", {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({
        exception_type: detail.exception_type,
        exception_message: detail.exception_message,
        traceback: detail.traceback,
      }),
    });
    if (response.ok) received({ ...(await response.json()), prompt_id: detail.prompt_id });
  } catch (error) {
    console.warn("archfit: could not explain the error", error);
  }
}

// ---- the Pre-flight node

function wrap(text, width) {
  const lines = [];
  let line = "";
  for (const word of text.split(" ")) {
    if (line && (line + " " + word).length > width) {
      lines.push(line);
      line = "    " + word;
    } else {
      line = line ? `${line} ${word}` : word;
    }
  }
  if (line) lines.push(line);
  return lines;
}

// What the node shows of an archfit.check/1 document, fix first: each
// failing stack's title (the core's) with its command under it, then one
// line for what runs. The full list is the node's details (the dialog).
export function checklist(report, { width = 64, shown = 3 } = {}) {
  const lines = [];
  const devices = report.devices ?? [];
  const units = report.stacks ?? report.components ?? [];
  if (!devices.length) {
    lines.push({ text: "? No GPU to judge against: nothing was judged", ok: null });
    lines.push({ text: "  set ARCHFIT_GPU (e.g. \"RTX 5090\") to ask about one", ok: null });
    return lines;
  }
  const gpu = devices.map((d) => `${d.name} (sm_${d.sm})`).join(", ");
  // The core's word, never a list of our own: the unit's "blocks", else the
  // document's verdict table; a verdict neither knows blocks nothing.
  const blocks = (unit) => Boolean(unit.blocks ?? report.verdicts?.[unit.verdict]?.blocks);
  const failing = units.filter((unit) => unit.verdict !== "unknown" && blocks(unit));
  for (const unit of failing.slice(0, shown)) {
    const title = unit.title || `${unit.name} ${unit.version ?? ""} will fail (${unit.verdict})`;
    lines.push({ text: `✗ ${title}`, ok: false });
    const action = unit.fix?.commands?.[0] ?? unit.fix?.summary;
    for (const part of action ? wrap(action, width) : [])
      lines.push({ text: `  ${part}`, ok: null, command: Boolean(unit.fix?.commands?.[0]) });
  }
  if (failing.length > shown)
    lines.push({ text: `✗ ${failing.length - shown} more will fail: see details`, ok: false });
  const running = units.length - failing.length;
  if (!failing.length)
    lines.push({ text: `✓ All ${units.length} stacks run on ${gpu}`, ok: true });
  else if (running > 0)
    lines.push({ text: `✓ ${running} other ${running === 1 ? "stack runs" : "stacks run"} on ${gpu}`, ok: true });
  return lines;
}

function drawChecklist(node, ctx) {
  const lines = node.archfitChecklist;
  if (!lines || node.flags?.collapsed) return;
  const lineHeight = 16;
  const top = node.size[1] - lines.length * lineHeight - 6;
  ctx.save();
  ctx.font = "12px monospace";
  lines.forEach((line, i) => {
    ctx.fillStyle = line.ok === null ? (line.command ? "#fff" : "#ccc") : line.ok ? "#6c6" : "#f66";
    ctx.fillText(line.text, 10, top + (i + 1) * lineHeight);
  });
  ctx.restore();
}

app.registerExtension({
  name: "archfit.diagnosis",
  async setup() {
    api.addEventListener("archfit.diagnosis", ({ detail }) => received(detail));
    api.addEventListener("execution_error", ({ detail }) => {
      explainExecutionError(detail);
    });
  },
  async beforeRegisterNodeDef(nodeType, nodeData) {
    if (nodeData.name !== "ArchfitPreflight") return;
    const onExecuted = nodeType.prototype.onExecuted;
    nodeType.prototype.onExecuted = function (message) {
      onExecuted?.apply(this, arguments);
      const report = message?.archfit_report?.[0];
      if (!report) return;
      this.archfitChecklist = checklist(report);
      this.archfitDetails = {
        toast: { title: report.summary ?? "archfit check", cause: "", command: "", step: "" },
        text: message?.text?.[0] ?? "",
      };
      if (!this.archfitDetailsWidget && this.addWidget)
        this.archfitDetailsWidget = this.addWidget("button", "details", null, () => {
          if (this.archfitDetails) showDetails(this.archfitDetails);
        });
      const longest = Math.max(...this.archfitChecklist.map((line) => line.text.length));
      const width = Math.max(this.size[0], 24 + longest * 7.3);
      const needed = 80 + this.archfitChecklist.length * 16 + 40;
      if (this.size[1] < needed || this.size[0] < width)
        this.setSize?.([width, Math.max(this.size[1], needed)]);
      this.setDirtyCanvas?.(true, true);
    };
    const onDrawForeground = nodeType.prototype.onDrawForeground;
    nodeType.prototype.onDrawForeground = function (ctx) {
      onDrawForeground?.apply(this, arguments);
      drawChecklist(this, ctx);
    };
  },
});
