// archfit's front end for ComfyUI: shows the cause and the fix of an
// execution error (a toast, and a details dialog), and draws the Pre-flight
// node's checklist on the node.
//
// Diagnoses come two ways: pushed by the back end's log handler as the
// "archfit.diagnosis" event, or asked for with POST /archfit/explain when
// ComfyUI's own "execution_error" arrives and no push follows soon (an
// error the handler did not see). The same diagnosis is shown once, until
// it comes again after a while (the same failing workflow run again later).
import { app } from "../../scripts/app.js";
import { api } from "../../scripts/api.js";

const PUSH_GRACE_MS = 1500;
// The same diagnosis again within this time is the same failure reported
// twice (pushed and asked for); after it, a new run that failed again.
const REPEAT_AFTER_MS = 15000;
const shown = new Map(); // key -> performance.now() when shown

function keyOf(payload) {
  const d = payload?.diagnosis ?? {};
  return `${d.category}|${d.error?.message ?? ""}`;
}

function headline(d) {
  const component = d.component
    ? ` in ${d.component.name}${d.component.version ? " " + d.component.version : ""}`
    : "";
  if (!d.recognised) return "archfit: not a CUDA architecture error it knows";
  return `archfit: ${d.category}${component}`;
}

function summary(d) {
  const parts = [];
  if (d.environment?.evidence?.length) {
    const said = { confirms: "The check confirms it", refutes: "The check says otherwise" };
    parts.push(`${said[d.environment.verdict] ?? "The check"}: ${d.environment.evidence[0]}`);
  }
  else if (d.explanation) parts.push(d.explanation);
  if (d.fix?.length) parts.push(`Fix: ${d.fix[0]}`);
  return parts.join("\n");
}

// A modal with the whole diagnosis text; one at a time.
export function showDetails(payload) {
  document.querySelector(".archfit-dialog")?.remove();
  const dialog = document.createElement("div");
  dialog.className = "archfit-dialog";
  dialog.setAttribute("role", "dialog");
  dialog.style.cssText =
    "position:fixed;inset:10% 15%;z-index:10000;background:#1e1e1e;color:#ddd;" +
    "border:1px solid #c44;border-radius:8px;padding:16px;overflow:auto;font:13px monospace;";
  const title = document.createElement("h3");
  title.textContent = headline(payload.diagnosis ?? {});
  title.style.cssText = "margin:0 0 8px;color:#f88;font-family:sans-serif;";
  const body = document.createElement("pre");
  body.className = "archfit-dialog-text";
  body.style.whiteSpace = "pre-wrap";
  body.textContent = payload.text ?? "";
  const close = document.createElement("button");
  close.textContent = "Close";
  close.onclick = () => dialog.remove();
  dialog.append(title, body, close);
  document.body.append(dialog);
  return dialog;
}

// Only errors archfit recognises as CUDA, driver or architecture failures
// are its to explain; ComfyUI's own dialog speaks for everything else.
export function showDiagnosis(payload) {
  if (!payload?.diagnosis?.recognised) return false;
  const key = keyOf(payload);
  const now = performance.now();
  if (shown.has(key) && now - shown.get(key) < REPEAT_AFTER_MS) return false;
  for (const [old, at] of shown) if (now - at >= REPEAT_AFTER_MS) shown.delete(old);
  shown.set(key, now);
  const d = payload.diagnosis ?? {};
  const toast = app.extensionManager?.toast;
  if (toast?.add) {
    toast.add({
      severity: "error",
      summary: headline(d),
      detail: summary(d),
      life: 30000,
    });
  }
  showDetails(payload);
  return true;
}

// performance.now() of the last push: a monotonic clock, so -Infinity, not
// 0, is "never" (0 is the page's start).
let lastPushAt = -Infinity;

async function explainExecutionError(detail) {
  const errorAt = performance.now();
  await new Promise((resolve) => setTimeout(resolve, PUSH_GRACE_MS));
  // The back end's handler has answered. Its push can come just before
  // ComfyUI's execution_error as well as after it: the handler diagnoses on
  // a worker thread while the executor goes on to send execution_error, and
  // both are queued on the server's loop in whichever order they are ready.
  if (lastPushAt >= errorAt - PUSH_GRACE_MS) return;
  try {
    const response = await api.fetchApi("/archfit/explain", {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({
        exception_type: detail.exception_type,
        exception_message: detail.exception_message,
        traceback: detail.traceback,
      }),
    });
    if (response.ok) showDiagnosis(await response.json());
  } catch (error) {
    console.warn("archfit: could not explain the error", error);
  }
}

// The checklist lines of an archfit.check/1 document, for the canvas: a
// line per stack, marked by whether the core says it blocks, with the fix's
// first command under a failing one. A document from before stacks lists
// its components.
export function checklist(report) {
  const lines = [];
  for (const device of report.devices ?? [])
    lines.push({ text: `GPU ${device.name} (sm_${device.sm})`, ok: null });
  if (report.schema && !(report.devices ?? []).length)
    lines.push({ text: "GPU none: nothing judged (set ARCHFIT_GPU to ask about one)", ok: null });
  const units = report.stacks ?? report.components ?? [];
  for (const unit of units) {
    const blocks = unit.blocks ?? !(unit.verdict === "native" || unit.verdict === "ptx-jit");
    // With no GPU nothing was judged: neither a pass nor a failure.
    const judged = unit.verdict !== "unknown" && (report.devices ?? []).length > 0;
    lines.push({
      text: `${!judged ? "?" : blocks ? "✗" : "✓"} ${unit.name} ${unit.version ?? ""} — ${unit.verdict}`,
      ok: judged ? !blocks : null,
    });
    const command = unit.fix?.commands?.[0];
    if (blocks && command) lines.push({ text: `    ${command}`, ok: null });
  }
  if (!lines.length) lines.push({ text: "nothing checked", ok: null });
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
    ctx.fillStyle = line.ok === null ? "#ccc" : line.ok ? "#6c6" : "#f66";
    ctx.fillText(line.text, 10, top + (i + 1) * lineHeight);
  });
  ctx.restore();
}

app.registerExtension({
  name: "archfit.diagnosis",
  async setup() {
    api.addEventListener("archfit.diagnosis", ({ detail }) => {
      lastPushAt = performance.now();
      showDiagnosis(detail);
    });
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
      if (report) {
        this.archfitChecklist = checklist(report);
        const needed = 40 + this.archfitChecklist.length * 16 + 60;
        if (this.size[1] < needed) this.setSize?.([Math.max(this.size[0], 360), needed]);
        this.setDirtyCanvas?.(true, true);
      }
    };
    const onDrawForeground = nodeType.prototype.onDrawForeground;
    nodeType.prototype.onDrawForeground = function (ctx) {
      onDrawForeground?.apply(this, arguments);
      drawChecklist(this, ctx);
    };
  },
});
