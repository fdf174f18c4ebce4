// regkb dashboard: small progressive enhancements. Every page works without this file.
"use strict";

function announce(message) {
  var region = document.getElementById("live");
  if (!region) return;
  region.textContent = "";
  window.setTimeout(function () { region.textContent = message; }, 50);
}

// Copy buttons: data-copy names the element whose text is copied.
function selectText(el) {
  var range = document.createRange();
  range.selectNodeContents(el);
  var selection = window.getSelection();
  selection.removeAllRanges();
  selection.addRange(range);
}

document.querySelectorAll("[data-copy]").forEach(function (button) {
  button.hidden = false;
  button.addEventListener("click", function () {
    var target = document.querySelector(button.getAttribute("data-copy"));
    if (!target) return;
    var text = target.textContent.trim();
    var done = function () {
      button.textContent = "Copied";
      announce("Copied to the clipboard");
      window.setTimeout(function () { button.textContent = "Copy"; }, 2500);
    };
    var fallback = function () {
      selectText(target);
      var copied = false;
      try { copied = document.execCommand("copy"); } catch (e) { copied = false; }
      if (copied) done(); else announce("Press Ctrl+C (or Cmd+C) to copy the selected key");
    };
    if (navigator.clipboard && window.isSecureContext) navigator.clipboard.writeText(text).then(done, fallback);
    else fallback();
  });
});

// Document statuses refresh themselves while any document is still processing.
(function () {
  var table = document.querySelector("[data-documents-status-url]");
  if (!table) return;
  var url = table.getAttribute("data-documents-status-url");
  var intervalMs = 2000;
  var deadline = Date.now() + 30 * 60 * 1000;
  var labels = { processing: "Processing", ready: "Ready", failed: "Failed" };

  function pending() {
    return table.querySelectorAll('tr[data-status="processing"]').length > 0;
  }

  function poll() {
    if (!pending() || Date.now() > deadline) return;
    fetch(url, { credentials: "same-origin", headers: { accept: "application/json" } })
      .then(function (response) { return response.ok ? response.json() : null; })
      .then(function (body) {
        if (!body) return;
        body.documents.forEach(function (doc) {
          var row = table.querySelector('tr[data-document-id="' + doc.id + '"]');
          if (!row || row.getAttribute("data-status") === doc.status) return;
          row.setAttribute("data-status", doc.status);
          var badge = row.querySelector("[data-status-badge]");
          if (badge) {
            badge.className = "badge " + doc.status;
            badge.textContent = labels[doc.status] || doc.status;
          }
          var pages = row.querySelector("[data-pages]");
          if (pages && doc.pages !== null) pages.textContent = String(doc.pages);
          announce(row.getAttribute("data-filename") + " is now " + (labels[doc.status] || doc.status).toLowerCase());
        });
      })
      .catch(function () { /* a missed poll is retried on the next tick */ })
      .then(function () { if (pending()) window.setTimeout(poll, intervalMs); });
  }
  window.setTimeout(poll, intervalMs);
})();

// After checkout, the top-up page waits for the payment provider's confirmation by itself.
(function () {
  var status = document.querySelector("[data-order-status-url]");
  if (!status) return;
  var url = status.getAttribute("data-order-status-url");
  var waiting = ["creating", "pending"];
  var deadline = Date.now() + 10 * 60 * 1000;
  function poll() {
    if (Date.now() > deadline) return;
    fetch(url, { credentials: "same-origin", headers: { accept: "application/json" } })
      .then(function (response) { return response.ok ? response.json() : null; })
      .then(function (body) {
        if (body && waiting.indexOf(body.status) === -1) window.location.reload();
        else window.setTimeout(poll, 2000);
      })
      .catch(function () { window.setTimeout(poll, 2000); });
  }
  window.setTimeout(poll, 2000);
})();
