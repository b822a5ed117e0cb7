// The operator's view: the figures of shogi.v1.Operator's GetOverview, drawn as cards and
// tables, refreshed by main.ts while the view is open.

import type { GetOverviewResponse } from "./gen/shogi/v1/operator_pb";
import { h } from "./dom";


const el = (id: string): HTMLElement => document.getElementById(id)!;

const time = (ms: bigint | number, seconds = true): string =>
  new Date(Number(ms)).toLocaleTimeString("en-GB", seconds ? {} : { hour: "2-digit", minute: "2-digit" });

function table(head: string[], rows: (string | Node)[][], attrs: Record<string, string> = {}): HTMLElement {
  return h("table", attrs,
    h("thead", {}, h("tr", {}, ...head.map((c) => h("th", { scope: "col" }, c)))),
    h("tbody", {}, ...rows.map((r) => h("tr", {}, ...r.map((c) => h("td", {}, c))))));
}

export function drawOverview(o: GetOverviewResponse): void {
  el("operator-updated").textContent = `Updated ${time(o.nowUnixMs)}; refreshed every 2 seconds.`;
  el("op-live").textContent = String(o.liveGames);
  el("op-ended").textContent = String(o.endedGames);
  el("op-errors-count").textContent = String(o.errors.length);
  const aside = o.setAsideCounts.reduce((n, c) => n + Number(c.count), 0);
  el("op-aside-count").textContent = String(Math.max(aside, o.setAside.length));

  // Verdicts: one row per minute of the last ten, one column per kind seen, with a bar.
  const kinds = [...new Set(o.verdicts.map((v) => v.codeName))].sort();
  const now = Number(o.nowUnixMs);
  const thisMinute = Math.floor(now / 60_000) * 60_000;
  const minutes = Array.from({ length: 10 }, (_, i) => thisMinute - (9 - i) * 60_000);
  const most = Math.max(1, ...minutes.map((m) => o.verdicts.filter((v) => Number(v.minuteUnixMs) === m).reduce((n, v) => n + v.count, 0)));
  const rows = minutes.map((m) => {
    const these = o.verdicts.filter((v) => Number(v.minuteUnixMs) === m);
    const total = these.reduce((n, v) => n + v.count, 0);
    const bar = h("span", { class: "bar" });
    bar.style.width = `${(total / most) * 100}%`;
    return [
      time(m, false),
      ...kinds.map((k) => String(these.find((v) => v.codeName === k)?.count ?? "")),
      h("span", { class: "bar-cell" }, bar, h("span", { class: "total" }, String(total))),
    ];
  });
  el("op-verdicts").replaceChildren(
    table(["minute", ...kinds.map((k) => k.replace(/_/g, " ")), "all"], rows, { id: "op-verdict-table" }),
  );

  el("op-errors").replaceChildren(o.errors.length
    ? table(["time", "call", "status", "message"], o.errors.map((e) => [
      time(e.unixMs), e.method.replace(/^\/shogi\.v1\./, ""), e.code, e.message,
    ]), { id: "op-error-table" })
    : h("p", { class: "none" }, "No errors since the arbiter started."));

  const counts = o.setAsideCounts.filter((c) => c.count > 0n);
  const parts: HTMLElement[] = [
    h("p", {}, counts.length
      ? counts.map((c) => `${c.reader}: ${c.count} ${c.reason.replace(/_/g, " ")}`).join("; ")
      : "This process has set no event aside."),
  ];
  if (o.setAside.length) {
    parts.push(table(["time", "game", "sequence", "reason", "detail"], o.setAside.map((s) => [
      time(s.unixMs), s.gameId, String(s.sequence), s.reason, s.detail,
    ]), { id: "op-aside-table" }));
  }
  el("op-aside").replaceChildren(...parts);
}
