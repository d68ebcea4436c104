// WCAG 2.x contrast of a page's visible text, as the browser renders it: each element with text of its own against
// the first opaque background behind it (its own or an ancestor's). AA: 4.5:1 for body text, 3:1 for large text
// (24 px, or 18.66 px bold). Returns what falls short, for a test to expect none. The check runs in the page (plain
// JavaScript: the test project's TypeScript has no DOM types).
import type { Page } from "playwright-core";

export type ContrastProblem = { text: string; ratio: number; needed: number; color: string; background: string };

const CHECK = `(() => {
  const rgba = (c) => {
    const m = c.match(/rgba?\\(([^)]+)\\)/);
    if (!m) return [0, 0, 0, 0];
    const [r, g, b, a = "1"] = m[1].split(/[\\s,/]+/).filter(Boolean);
    return [Number(r), Number(g), Number(b), Number(a)];
  };
  const lin = (v) => {
    const s = v / 255;
    return s <= 0.03928 ? s / 12.92 : ((s + 0.055) / 1.055) ** 2.4;
  };
  const luminance = ([r, g, b]) => 0.2126 * lin(r) + 0.7152 * lin(g) + 0.0722 * lin(b);
  // The first background with any opacity behind the element, blended over white where it is translucent.
  const backgroundOf = (el) => {
    for (let e = el; e; e = e.parentElement) {
      const c = rgba(getComputedStyle(e).backgroundColor);
      if (c[3] > 0) return c.slice(0, 3).map((v) => v * c[3] + 255 * (1 - c[3]));
    }
    return [255, 255, 255];
  };
  const out = [];
  for (const el of document.body.querySelectorAll("*")) {
    const own = Array.from(el.childNodes).filter((n) => n.nodeType === Node.TEXT_NODE).map((n) => n.textContent).join("").trim();
    if (!own) continue;
    const style = getComputedStyle(el);
    const box = el.getBoundingClientRect();
    if (style.visibility !== "visible" || box.width === 0 || box.height === 0 || Number(style.opacity) === 0) continue;
    if (el.closest("[hidden], [aria-hidden='true'], svg")) continue;
    const fg = rgba(style.color);
    const bg = backgroundOf(el);
    const color = fg.slice(0, 3).map((v, i) => v * fg[3] + bg[i] * (1 - fg[3]));
    const [hi, lo] = [luminance(color), luminance(bg)].sort((a, b) => b - a);
    const ratio = (hi + 0.05) / (lo + 0.05);
    const size = Number.parseFloat(style.fontSize);
    const needed = size >= 24 || (size >= 18.66 && Number(style.fontWeight) >= 700) ? 3 : 4.5;
    if (ratio < needed) {
      out.push({ text: own.slice(0, 40), ratio: Math.round(ratio * 100) / 100, needed, color: style.color, background: "rgb(" + bg.join(", ") + ")" });
    }
  }
  return out;
})()`;

export async function contrastProblems(page: Page): Promise<ContrastProblem[]> {
  return (await page.evaluate(CHECK)) as ContrastProblem[];
}
