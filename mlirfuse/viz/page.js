// mlirfuse viz page: draws the DOT text with Graphviz (viz.js, inlined before this script), then shows a
// fusion group's kernel, ops and explain reasons in #details when a cluster or one of its nodes is hovered
// (click keeps it there); other nodes show what they are. Sets <body data-rendered="true"> once drawn ("error" if Graphviz failed).
(function () {
  "use strict";
  const data = JSON.parse(document.getElementById("mlirfuse-data").textContent);
  const details = document.getElementById("details");
  const container = document.getElementById("graph");
  let pinned = null;

  function element(tag, text, className) {
    const el = document.createElement(tag);
    if (text !== undefined) el.textContent = text;
    if (className) el.className = className;
    return el;
  }

  function setActive(id) {
    for (const el of container.querySelectorAll(".active")) el.classList.remove("active");
    if (id === null) return;
    for (const el of [id, ...data.groups[id].nodes]) {
      const drawn = document.getElementById(el);
      if (drawn) drawn.classList.add("active");
    }
  }

  function showGroup(id) {
    const g = data.groups[id];
    const n = g.ops.length;
    const body = [element("h2", g.name), element("p", `${g.kind} · ${n} op${n === 1 ? "" : "s"}`, "kind")];
    for (const text of [g.cost, g.peak]) if (text) body.push(element("p", text, "cost"));
    if (pinned === id) body.push(element("p", "kept (click the group again to release)", "pinned"));
    body.push(element("h3", "Ops, in order"));
    const ops = element("ol", undefined, "ops");
    for (const op of g.ops) ops.append(element("li", op));
    body.push(ops);
    body.push(element("h3", "Not fused with, and why"));
    if (g.reasons.length) {
      const reasons = element("ul", undefined, "reasons");
      for (const reason of g.reasons) reasons.append(element("li", reason, "reason"));
      body.push(reasons);
    } else {
      body.push(element("p", "No neighbour left outside was recorded (compile with explain).", "hint"));
    }
    delete details.dataset.node;
    details.dataset.group = id;
    details.replaceChildren(...body);
    setActive(id);
  }

  // A node outside the groups (ATen op, extern call, argument): what it is, in full.
  function showNode(id) {
    const node = data.nodes[id];
    delete details.dataset.group;
    details.dataset.node = id;
    details.replaceChildren(element("h2", node.kind), element("p", node.title, "node-title"));
    setActive(null);
  }

  function hover(id) {
    if (pinned === null) showGroup(id);
  }

  function click(id) {
    pinned = pinned === id ? null : id;
    showGroup(id);
  }

  Viz.instance().then(function (viz) {
    container.replaceChildren(viz.renderSVGElement(data.dot));
    for (const [id, group] of Object.entries(data.groups)) {
      for (const part of [id, ...group.nodes]) {
        const el = document.getElementById(part);
        if (!el) continue;
        el.addEventListener("mouseenter", () => hover(id));
        el.addEventListener("click", () => click(id));
      }
    }
    for (const [id, node] of Object.entries(data.nodes)) {
      const el = node.cluster === null ? document.getElementById(id) : null;
      if (el) el.addEventListener("mouseenter", () => pinned === null && showNode(id));
    }
    document.body.dataset.rendered = "true";
  }).catch(function (err) {
    container.replaceChildren(element("p", "Graphviz could not draw the graph: " + err, "error"));
    document.body.dataset.rendered = "error";
  });
})();
