// A stand-in for ComfyUI's scripts/api.js (tests/python/comfyui/test_comfyui_web.py).
//
// ComfyUI's `api` is a ComfyApi, an EventTarget: a websocket message
// {"type": T, "data": D} is dispatched as new CustomEvent(T, {detail: D}), and
// for an unknown T only when something has called addEventListener(T, ...)
// (ComfyUI_frontend, src/scripts/api.ts). fetchApi(route, init) is fetch(api_base + "/api" + route, init).

class StandInApi extends EventTarget {
  constructor() {
    super();
    this.api_base = "";
    this.listened = new Set();
    // For the test: each fetchApi call, with performance.now() at the call.
    this.fetched = [];
    // What ComfyUI sets from the socket's first "status" message.
    this.clientId = "standin-client";
  }

  addEventListener(type, callback, options) {
    this.listened.add(type);
    super.addEventListener(type, callback, options);
  }

  apiURL(route) {
    return this.api_base + "/api" + route;
  }

  fetchApi(route, init) {
    this.fetched.push({ route, method: init?.method ?? "GET", at: performance.now() });
    return fetch(this.apiURL(route), init);
  }

  // What ComfyUI's socket handler does with a message from the server; returns
  // false where ComfyUI would log "Unknown message type" (nobody listens).
  // performance.now() of the last one is kept in lastReceivedAt.
  receive(type, data) {
    this.lastReceivedAt = performance.now();
    if (!this.listened.has(type)) return false;
    this.dispatchEvent(new CustomEvent(type, { detail: data }));
    return true;
  }
}

export const api = new StandInApi();
