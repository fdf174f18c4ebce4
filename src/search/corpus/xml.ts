/**
 * A small XML reader for the corpus sources we ship (Formex, GPO). It keeps elements,
 * attributes and text, and drops comments, processing instructions and doctype: all the
 * structure chunking needs. Not a validating parser; malformed input throws.
 */
export interface XmlElement {
  name: string;
  attrs: Record<string, string>;
  children: XmlNode[];
}
export type XmlNode = XmlElement | string;

/** Nesting deeper than this is not legal text; refuse rather than recurse without bound. */
const XML_DEPTH_MAX = 200;

const ENTITIES: Record<string, string> = { amp: "&", lt: "<", gt: ">", quot: '"', apos: "'" };

export function decodeEntities(text: string): string {
  return text.replace(/&(#x[0-9a-f]+|#[0-9]+|[a-z]+);/gi, (whole, name: string) => {
    if (name[0] === "#") {
      const code = name[1] === "x" || name[1] === "X" ? parseInt(name.slice(2), 16) : parseInt(name.slice(1), 10);
      return Number.isFinite(code) ? String.fromCodePoint(code) : whole;
    }
    return ENTITIES[name.toLowerCase()] ?? whole;
  });
}

const TOKEN = /<!--[\s\S]*?-->|<\?[\s\S]*?\?>|<!\[CDATA\[([\s\S]*?)\]\]>|<![^>]*>|<\/([^\s>]+)\s*>|<([^\s/>]+)((?:\s+[^\s=/>]+\s*=\s*(?:"[^"]*"|'[^']*'))*)\s*(\/?)>|([^<]+)/g;
const ATTR = /([^\s=/>]+)\s*=\s*(?:"([^"]*)"|'([^']*)')/g;

export function parseXml(xml: string): XmlElement {
  const root: XmlElement = { name: "#document", attrs: {}, children: [] };
  const stack: XmlElement[] = [root];
  for (const m of xml.matchAll(TOKEN)) {
    const [, cdata, closeName, openName, attrText, selfClosing, text] = m;
    const parent = stack[stack.length - 1]!;
    if (text !== undefined) parent.children.push(decodeEntities(text));
    else if (cdata !== undefined) parent.children.push(cdata);
    else if (closeName !== undefined) {
      if (parent.name !== closeName) throw new Error(`XML: </${closeName}> closes <${parent.name}>`);
      stack.pop();
    } else if (openName !== undefined) {
      const attrs: Record<string, string> = {};
      for (const a of (attrText ?? "").matchAll(ATTR)) attrs[a[1]!] = decodeEntities(a[2] ?? a[3] ?? "");
      const element: XmlElement = { name: openName, attrs, children: [] };
      parent.children.push(element);
      if (!selfClosing) {
        if (stack.length > XML_DEPTH_MAX) throw new Error("XML: nesting too deep");
        stack.push(element);
      }
    }
  }
  if (stack.length !== 1) throw new Error(`XML: <${stack[stack.length - 1]!.name}> is never closed`);
  return root;
}

export function isElement(node: XmlNode): node is XmlElement {
  return typeof node !== "string";
}

export function childElements(element: XmlElement, name?: string): XmlElement[] {
  return element.children.filter((c): c is XmlElement => isElement(c) && (name === undefined || c.name === name));
}

export function firstChild(element: XmlElement, name: string): XmlElement | undefined {
  return childElements(element, name)[0];
}

/** Every descendant element named `name`, in document order, not descending into matches. */
export function findAll(element: XmlElement, name: string): XmlElement[] {
  const found: XmlElement[] = [];
  const visit = (e: XmlElement) => {
    for (const c of childElements(e)) {
      if (c.name === name) found.push(c);
      else visit(c);
    }
  };
  visit(element);
  return found;
}

/**
 * The element's text with whitespace collapsed. Formex marks quotation marks as empty
 * QUOT.START/QUOT.END elements and footnotes as NOTE; `skip` names elements to leave out.
 */
export function textOf(node: XmlNode, skip: ReadonlySet<string> = new Set()): string {
  const parts: string[] = [];
  const visit = (n: XmlNode) => {
    if (!isElement(n)) {
      parts.push(n);
      return;
    }
    if (skip.has(n.name)) return;
    if (n.name === "QUOT.START") parts.push("‘");
    else if (n.name === "QUOT.END") parts.push("’");
    for (const c of n.children) visit(c);
  };
  visit(node);
  return collapseSpaces(parts.join(""));
}

export function collapseSpaces(text: string): string {
  return text.replace(/\s+/g, " ").trim();
}
