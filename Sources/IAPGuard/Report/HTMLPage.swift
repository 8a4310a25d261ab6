import Crypto
import Foundation

/// The frame of every HTML page iapguard writes: a strict Content-Security-Policy, one inline style sheet and
/// one inline script (both fixed text, allowed by their SHA-256 hashes), no external resources at all.
enum HTMLPage {
    /// The only script on any page. It holds no data: it makes `table.sortable` headers clickable, adds a
    /// filter box before each `table.filterable`, level/status/rule filters to the case queue (from the
    /// `data-*` attributes of its cases), and opens every `<details>` for printing.
    static let script = """
        (function () {
          "use strict";
          function each(list, fn) { Array.prototype.forEach.call(list, fn); }
          function key(row, i) {
            var c = row.cells[i];
            if (!c) { return ""; }
            var s = c.getAttribute("data-sort");
            return s !== null ? s : c.textContent.trim().toLowerCase();
          }
          each(document.querySelectorAll("table.sortable"), function (table) {
            if (!table.tHead || !table.tBodies.length) { return; }
            var heads = table.tHead.rows[0].cells;
            each(heads, function (th, index) {
              var button = document.createElement("button");
              button.type = "button";
              button.className = "sort";
              while (th.firstChild) { button.appendChild(th.firstChild); }
              th.appendChild(button);
              button.addEventListener("click", function () {
                var body = table.tBodies[0];
                var rows = Array.prototype.slice.call(body.rows);
                var numeric = th.getAttribute("data-type") === "number";
                var ascending = th.getAttribute("aria-sort") !== "ascending";
                each(heads, function (other) { other.removeAttribute("aria-sort"); });
                th.setAttribute("aria-sort", ascending ? "ascending" : "descending");
                rows.sort(function (a, b) {
                  var x = key(a, index), y = key(b, index), r;
                  if (numeric) { r = (parseFloat(x) || 0) - (parseFloat(y) || 0); } else { r = x < y ? -1 : (x > y ? 1 : 0); }
                  return ascending ? r : -r;
                });
                rows.forEach(function (row) { body.appendChild(row); });
              });
            });
          });
          each(document.querySelectorAll("table.filterable"), function (table) {
            if (!table.tBodies.length) { return; }
            var label = document.createElement("label");
            label.className = "filter";
            label.appendChild(document.createTextNode("Filter rows: "));
            var input = document.createElement("input");
            input.type = "search";
            label.appendChild(input);
            table.parentNode.insertBefore(label, table);
            input.addEventListener("input", function () {
              var q = input.value.toLowerCase();
              each(table.tBodies[0].rows, function (row) {
                row.hidden = q !== "" && row.textContent.toLowerCase().indexOf(q) === -1;
              });
            });
          });
          var filters = document.getElementById("case-filters");
          if (filters) {
            var items = document.querySelectorAll("[data-case]");
            var chosen = { level: "", status: "", rules: "" };
            var apply = function () {
              each(items, function (item) {
                var show = true;
                ["level", "status"].forEach(function (name) {
                  if (chosen[name] !== "" && item.getAttribute("data-" + name) !== chosen[name]) { show = false; }
                });
                if (chosen.rules !== "" && (" " + item.getAttribute("data-rules") + " ").indexOf(" " + chosen.rules + " ") === -1) { show = false; }
                item.hidden = !show;
              });
            };
            [["level", "Level"], ["status", "Status"], ["rules", "Rule"]].forEach(function (pair) {
              var values = [];
              each(items, function (item) {
                (item.getAttribute("data-" + pair[0]) || "").split(" ").forEach(function (v) {
                  if (v !== "" && values.indexOf(v) === -1) { values.push(v); }
                });
              });
              values.sort();
              var label = document.createElement("label");
              label.className = "filter";
              label.appendChild(document.createTextNode(pair[1] + ": "));
              var select = document.createElement("select");
              [""].concat(values).forEach(function (v) {
                var option = document.createElement("option");
                option.value = v;
                option.textContent = v === "" ? "all" : v;
                select.appendChild(option);
              });
              select.addEventListener("change", function () { chosen[pair[0]] = select.value; apply(); });
              label.appendChild(select);
              filters.appendChild(label);
            });
          }
          var opened = [];
          window.addEventListener("beforeprint", function () {
            each(document.querySelectorAll("details:not([open])"), function (d) { d.open = true; opened.push(d); });
          });
          window.addEventListener("afterprint", function () {
            opened.forEach(function (d) { d.open = false; });
            opened = [];
          });
        })();
        """

    /// The only style sheet.
    static let style = """
        :root { color-scheme: light dark; --bg: #ffffff; --fg: #1b1b1b; --muted: #595959; --line: #c9c9c9;
          --head: #f0f0f0; --zebra: #fafafa; --link: #0b57a4; --critical: #8e0000; --high: #c2410c;
          --medium: #a16207; --low: #1d4ed8; --informational: #52525b; --bar: #3b6ea8; --warn-bg: #fff4e5; }
        @media (prefers-color-scheme: dark) {
          :root { --bg: #111315; --fg: #e7e7e7; --muted: #a3a3a3; --line: #3d4247; --head: #1c1f22;
            --zebra: #16181b; --link: #8ab4f8; --critical: #ff7b7b; --high: #ffa270; --medium: #f5c451;
            --low: #8fb4ff; --informational: #b4b4bb; --bar: #7aa7dc; --warn-bg: #3a2a12; }
        }
        * { box-sizing: border-box; }
        body { margin: 0 auto; max-width: 1200px; padding: 1rem 1.25rem 3rem; background: var(--bg); color: var(--fg);
          font: 15px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; }
        h1 { font-size: 1.6rem; margin: 0.5rem 0 0.25rem; }
        h2 { font-size: 1.3rem; margin: 2rem 0 0.5rem; padding-top: 0.5rem; border-top: 2px solid var(--line); }
        h3 { font-size: 1.05rem; margin: 1.25rem 0 0.4rem; }
        a { color: var(--link); }
        p, li { overflow-wrap: anywhere; }
        .muted, .none { color: var(--muted); }
        nav ul { display: flex; flex-wrap: wrap; gap: 0.25rem 1rem; padding: 0; list-style: none; }
        table { border-collapse: collapse; margin: 0.25rem 0 1rem; width: 100%; }
        caption { text-align: left; font-weight: 600; padding: 0.25rem 0; }
        th, td { border: 1px solid var(--line); padding: 0.25rem 0.45rem; text-align: left; vertical-align: top;
          overflow-wrap: anywhere; word-break: break-word; }
        thead th { background: var(--head); }
        tbody tr:nth-child(even) { background: var(--zebra); }
        th[scope=row] { background: var(--head); font-weight: 600; }
        table.kv th[scope=row] { width: 38%; }
        td.nw { white-space: nowrap; }
        td.id { min-width: 10rem; }
        td.wide { min-width: 16rem; }
        td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
        .wrap { overflow-x: auto; }
        .lvl { display: inline-block; min-width: 6.5rem; padding: 0 0.35rem; border: 1px solid currentColor;
          border-left-width: 0.35rem; border-radius: 3px; font-size: 0.8rem; font-weight: 700;
          text-transform: uppercase; letter-spacing: 0.02em; white-space: nowrap; }
        .lvl-critical { color: var(--critical); border-style: double; border-left-style: solid; }
        .lvl-high { color: var(--high); }
        .lvl-medium { color: var(--medium); }
        .lvl-low { color: var(--low); }
        .lvl-informational { color: var(--informational); border-style: dashed; border-left-style: solid; }
        .tag { display: inline-block; padding: 0 0.3rem; border: 1px solid var(--line); border-radius: 3px;
          font-size: 0.8rem; white-space: nowrap; }
        .big { font-size: 1.5rem; font-weight: 700; }
        .ctl { color: var(--high); font-family: ui-monospace, monospace; font-size: 0.85em; }
        .trunc { color: var(--muted); font-style: italic; }
        .warn { background: var(--warn-bg); border-left: 4px solid var(--high); padding: 0.4rem 0.6rem; }
        code, .mono { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; font-size: 0.9em; }
        details { border: 1px solid var(--line); border-radius: 4px; margin: 0.35rem 0; padding: 0.2rem 0.6rem; }
        details > summary { cursor: pointer; overflow-wrap: anywhere; padding: 0.15rem 0; }
        details[open] > summary { border-bottom: 1px solid var(--line); margin-bottom: 0.4rem; }
        .grid2 { display: grid; grid-template-columns: repeat(auto-fit, minmax(320px, 1fr)); gap: 0 1.5rem; }
        svg.chart { width: 100%; max-width: 640px; height: auto; display: block; }
        svg.spark { width: 160px; height: 28px; display: block; }
        svg text { fill: var(--fg); font-size: 11px; font-family: system-ui, sans-serif; }
        svg text.current { font-weight: 700; }
        svg .grid { stroke: var(--line); stroke-width: 1; }
        svg .marker { stroke: var(--critical); stroke-width: 2; stroke-dasharray: 4 3; }
        svg .fill-bar { fill: var(--bar); }
        svg .fill-critical { fill: var(--critical); }
        svg .fill-high { fill: var(--high); }
        svg .fill-medium { fill: var(--medium); }
        svg .fill-low { fill: var(--low); }
        svg .fill-informational { fill: var(--informational); }
        .legend span { margin-right: 0.9rem; white-space: nowrap; }
        .swatch { display: inline-block; width: 0.8rem; height: 0.8rem; margin-right: 0.25rem; vertical-align: -0.1rem;
          border: 1px solid var(--line); }
        .sw-critical { background: var(--critical); } .sw-high { background: var(--high); }
        .sw-medium { background: var(--medium); } .sw-low { background: var(--low); }
        .sw-informational { background: var(--informational); }
        button.sort { all: inherit; cursor: pointer; border: 0; padding: 0; background: none; }
        button.sort::after { content: " \\2195"; color: var(--muted); }
        th[aria-sort=ascending] button.sort::after { content: " \\2191"; }
        th[aria-sort=descending] button.sort::after { content: " \\2193"; }
        label.filter { display: block; margin: 0.25rem 0; }
        .filters label.filter { display: inline-block; margin-right: 1rem; }
        table.cases td { overflow-wrap: normal; word-break: normal; }
        table.cases td.wide { min-width: 12rem; overflow-wrap: anywhere; }
        table.cases .lvl { min-width: 0; }
        label.filter input { font: inherit; padding: 0.1rem 0.3rem; }
        footer { margin-top: 3rem; color: var(--muted); font-size: 0.85rem; }
        @media print {
          :root { --bg: #ffffff; --fg: #000000; --zebra: #ffffff; --head: #eeeeee; }
          body { max-width: none; padding: 0; font-size: 11px; }
          nav, label.filter { display: none; }
          details { break-inside: avoid; }
          details::details-content { content-visibility: visible; display: block; }
          a { color: inherit; text-decoration: none; }
          h2 { break-before: auto; break-after: avoid; }
          table { break-inside: auto; } tr { break-inside: avoid; }
        }
        """

    /// The Content-Security-Policy: nothing may be loaded; only the style and script above may run.
    static let contentSecurityPolicy: String =
        "default-src 'none'; style-src '\(sha256Source(style))'; script-src '\(sha256Source(script))'; "
        + "img-src data:; base-uri 'none'; form-action 'none'"

    /// `sha256-<base64>` of a text's UTF-8 bytes, as CSP wants it.
    static func sha256Source(_ text: String) -> String {
        "sha256-" + Data(SHA256.hash(data: Data(text.utf8))).base64EncodedString()
    }

    /// A whole document around `body` (which must already be safe HTML); `title` is untrusted-safe.
    static func document(title: String, body: String) -> String {
        var out = "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
        out += "<meta http-equiv=\"Content-Security-Policy\" content=\"\(contentSecurityPolicy)\">\n"
        out += "<meta name=\"referrer\" content=\"no-referrer\">\n"
        out += "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
        out += "<meta name=\"color-scheme\" content=\"light dark\">\n"
        out += "<title>\(HTMLText.plain(title, maxCharacters: 120))</title>\n"
        out += "<style>\(style)</style>\n</head>\n<body>\n"
        out += body
        out += "<script>\(script)</script>\n</body>\n</html>\n"
        return out
    }
}
