/// The status page's stylesheet and refresh script, served by the ops endpoint itself so that the page needs
/// nothing from the internet.
enum StatusPageAssets {
    /// Phone first: one column, with tables turning into labelled rows on narrow screens; the QR codes keep at
    /// least 260 CSS pixels wherever the screen allows, which a phone camera reads at arm's length.
    static let stylesheet = """
        :root {
          --bg: #f3f4f6; --card: #fff; --text: #1b1f24; --muted: #5b6673; --line: #dde1e6;
          --up: #17692f; --up-bg: #d8f3e0; --warn: #7a4d00; --warn-bg: #ffefc7;
          --down: #a8201a; --down-bg: #fde2df; --busy: #0b57a4; --busy-bg: #dcebfb;
        }
        @media (prefers-color-scheme: dark) {
          :root {
            --bg: #14171b; --card: #1e2228; --text: #e6e8eb; --muted: #9aa5b2; --line: #323942;
            --up: #74d68f; --up-bg: #173a22; --warn: #f3c35b; --warn-bg: #3d2e0c;
            --down: #ff8f85; --down-bg: #43191a; --busy: #8cc2ff; --busy-bg: #15304f;
          }
        }
        * { box-sizing: border-box; }
        html { -webkit-text-size-adjust: 100%; }
        body {
          margin: 0; background: var(--bg); color: var(--text);
          font: 16px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, "Noto Sans", "DejaVu Sans", sans-serif;
        }
        .bar {
          display: flex; flex-wrap: wrap; justify-content: space-between; gap: .25rem 1rem;
          padding: .5rem 1rem; background: var(--text); color: var(--bg); font-size: .875rem;
        }
        .brand { font-weight: 700; letter-spacing: .03em; }
        body.stale .bar { background: var(--down); color: #fff; }
        body.stale main { opacity: .55; filter: grayscale(1); }
        main { max-width: 64rem; margin: 0 auto; padding: 1rem; }
        h1 { font-size: 1.6rem; margin: 0; overflow-wrap: anywhere; }
        h2 { font-size: 1.15rem; margin: 1.75rem 0 .75rem; }
        h3 { font-size: 1.05rem; margin: 0 0 .75rem; display: flex; flex-wrap: wrap; align-items: center; gap: .5rem; }
        code {
          font-family: ui-monospace, "SFMono-Regular", Menlo, Consolas, "DejaVu Sans Mono", monospace;
          font-size: .875em; overflow-wrap: anywhere;
        }
        .title { display: flex; flex-wrap: wrap; align-items: center; gap: .75rem; }
        .facts { display: grid; grid-template-columns: repeat(auto-fit, minmax(11rem, 1fr)); gap: .5rem; margin: 1rem 0 0; }
        .facts div { background: var(--card); border: 1px solid var(--line); border-radius: .5rem; padding: .5rem .75rem; }
        .facts dt, .pairs dt { color: var(--muted); font-size: .8rem; text-transform: uppercase; letter-spacing: .05em; }
        .facts dd { margin: 0; font-weight: 600; overflow-wrap: anywhere; }
        .state {
          display: inline-block; padding: .1rem .6rem; border-radius: 999px; background: var(--line); color: var(--text);
          font-size: .78rem; font-weight: 700; text-transform: uppercase; letter-spacing: .05em; white-space: nowrap;
        }
        .title .state { font-size: .95rem; padding: .2rem .8rem; }
        .state-up, .state-running, .state-idle { background: var(--up-bg); color: var(--up); }
        .state-busy, .state-connecting { background: var(--busy-bg); color: var(--busy); }
        .state-degraded, .state-starting, .state-offline { background: var(--warn-bg); color: var(--warn); }
        .state-down, .state-failed { background: var(--down-bg); color: var(--down); }
        .components, .card, .qr { background: var(--card); border: 1px solid var(--line); border-radius: .5rem; }
        .components { list-style: none; margin: 0; padding: 0; }
        .components li {
          display: flex; flex-wrap: wrap; align-items: center; gap: .25rem .75rem; padding: .6rem .75rem;
          border-top: 1px solid var(--line);
        }
        .components li:first-child { border-top: 0; }
        .components .state { min-width: 6.5rem; text-align: center; }
        .kind { color: var(--muted); font-size: .85rem; }
        .reason { flex-basis: 100%; color: var(--warn); }
        .details { flex-basis: 100%; display: flex; flex-wrap: wrap; gap: .1rem 1rem; color: var(--muted); font-size: .85rem; }
        .details:empty { display: none; }
        .detail b { color: var(--text); font-weight: 600; }
        .card { padding: 1rem; margin-bottom: 1rem; }
        .pairs { display: grid; grid-template-columns: max-content minmax(0, 1fr); gap: .4rem 1rem; margin: 0 0 .75rem; }
        .pairs dt { padding-top: .15rem; }
        .pairs dd { margin: 0; overflow-wrap: anywhere; }
        .urls code { display: block; }
        .figure { font-size: 1.15rem; }
        table.connections { width: 100%; border-collapse: collapse; font-size: .9rem; }
        .connections th, .connections td { padding: .4rem .5rem; border-top: 1px solid var(--line); text-align: left; }
        .connections th { color: var(--muted); font-size: .8rem; font-weight: 600; }
        .connections .number { text-align: right; font-variant-numeric: tabular-nums; }
        .codes { display: grid; grid-template-columns: repeat(auto-fill, minmax(min(100%, 20rem), 1fr)); gap: 1rem; }
        .qr { margin: 0; padding: 1rem; display: flex; flex-direction: column; align-items: center; }
        .qr-code { width: 100%; max-width: 19rem; background: #fff; line-height: 0; }
        .qr-code svg { display: block; width: 100%; height: auto; }
        .qr figcaption { width: 100%; margin-top: .75rem; overflow-wrap: anywhere; }
        .payload {
          display: block; margin: .5rem 0; padding: .5rem; border-radius: .25rem; background: var(--bg);
          font-size: .8rem; word-break: break-all; user-select: all;
        }
        .muted, .hint, .ago { color: var(--muted); font-size: .9rem; }
        .empty { color: var(--muted); margin: .25rem 0; }
        .error, .warn { color: var(--down); }
        progress { width: 8rem; vertical-align: middle; }
        .taken { margin-top: 2rem; color: var(--muted); font-size: .8rem; text-align: center; }
        @media (max-width: 36rem) {
          main { padding: .75rem; }
          .pairs { grid-template-columns: minmax(0, 1fr); gap: .1rem; }
          .pairs dt { padding-top: .5rem; }
          .connections thead { display: none; }
          .connections tr { display: block; padding: .35rem 0; border-top: 1px solid var(--line); }
          .connections td { display: flex; justify-content: space-between; gap: 1rem; padding: .1rem 0; border: 0; }
          .connections td, .connections .number { text-align: right; }
          .connections td::before { content: attr(data-label); color: var(--muted); text-align: left; }
        }
        @media print {
          .bar { display: none; }
          body { background: #fff; }
          .card, .qr { break-inside: avoid; }
        }

        """

    /// Replaces the live part every two seconds. It leaves the page alone while the reader has text selected in
    /// it (a payload being copied), and says so at the top when the gateway stops answering.
    static let script = """
        "use strict";
        (function () {
          var live = document.getElementById("live");
          var note = document.getElementById("refresh");
          if (!live || !note || !window.fetch) { return; }
          var source = live.getAttribute("data-source");
          var interval = 2000;
          var lastUpdate = new Date();

          function clock(date) { return date.toLocaleTimeString(); }
          function selecting() {
            var selection = window.getSelection();
            return selection && !selection.isCollapsed && live.contains(selection.anchorNode);
          }
          function updated() {
            lastUpdate = new Date();
            document.body.classList.remove("stale");
            note.textContent = "Live \\u00b7 updated " + clock(lastUpdate);
          }
          function refresh() {
            if (document.hidden) { window.setTimeout(refresh, interval); return; }
            fetch(source, { cache: "no-store", credentials: "omit" })
              .then(function (response) {
                if (!response.ok) { throw new Error("HTTP " + response.status); }
                return response.text();
              })
              .then(function (markup) {
                if (selecting()) {
                  note.textContent = "Paused while text is selected";
                  return;
                }
                live.innerHTML = markup;
                updated();
              })
              .catch(function (error) {
                document.body.classList.add("stale");
                note.textContent = "Gateway not answering (" + error.message + "); showing the state of " +
                  clock(lastUpdate);
              })
              .then(function () { window.setTimeout(refresh, interval); });
          }
          updated();
          window.setTimeout(refresh, interval);
        })();

        """
}
