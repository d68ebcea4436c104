// A strict XML 1.0 reading of an answer document (saxes: a conforming, non-validating parser that refuses
// characters XML forbids), so tests can require well-formedness and compare documents as trees, not strings.
import { SaxesParser } from "saxes";

export type XmlNode = { name: string; attributes: Record<string, string>; children: Array<XmlNode | string> };

/** The document's root element as a tree; throws with the parser's message when it is not well-formed. */
export function parseXml(xml: string): XmlNode {
  // saxes reads UTF-16 code units, so a lone surrogate would pass it: check that first.
  const lone = /\p{Cs}/u.exec(xml);
  if (lone) throw new Error(`not well-formed: lone surrogate at ${lone.index}`);
  const parser = new SaxesParser();
  const stack: XmlNode[] = [];
  let root: XmlNode | null = null;
  let error: Error | null = null;
  parser.on("error", (e) => {
    error ??= e;
  });
  parser.on("opentag", (tag) => {
    const node: XmlNode = { name: tag.name, attributes: { ...(tag.attributes as Record<string, string>) }, children: [] };
    if (stack.length) stack.at(-1)!.children.push(node);
    else root = node;
    stack.push(node);
  });
  parser.on("text", (text) => {
    if (stack.length && text.trim()) stack.at(-1)!.children.push(text);
  });
  parser.on("closetag", () => void stack.pop());
  parser.write(xml).close();
  if (error) throw new Error(`not well-formed: ${(error as Error).message}`);
  if (!root) throw new Error("not well-formed: no root element");
  return root;
}
