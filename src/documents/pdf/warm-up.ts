import { deflateSync } from "node:zlib";

/**
 * A one-page PDF whose content stream is FlateDecode-compressed, built here so the child
 * needs no file. Parsing it at start-up loads pdf.js's lazy parts before the first real
 * document, and proves the decoded-bytes meter is in place (decoded-bytes.ts).
 */
export function warmUpPdf(): Uint8Array {
  const content = deflateSync(Buffer.from("BT /F1 12 Tf 72 720 Td (regkb) Tj ET", "latin1"));
  const objects = [
    "<< /Type /Catalog /Pages 2 0 R >>",
    "<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
    "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 4 0 R >> >> /Contents 5 0 R >>",
    "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
  ].map((body) => Buffer.from(body, "latin1"));
  const parts: Buffer[] = [Buffer.from("%PDF-1.7\n", "latin1")];
  const offsets: number[] = [];
  let offset = parts[0]!.length;
  const push = (part: Buffer) => {
    parts.push(part);
    offset += part.length;
  };
  objects.forEach((body, index) => {
    offsets.push(offset);
    push(Buffer.concat([Buffer.from(`${index + 1} 0 obj\n`, "latin1"), body, Buffer.from("\nendobj\n", "latin1")]));
  });
  offsets.push(offset);
  push(Buffer.from(`5 0 obj\n<< /Filter /FlateDecode /Length ${content.length} >>\nstream\n`, "latin1"));
  push(content);
  push(Buffer.from("\nendstream\nendobj\n", "latin1"));
  const xref = ["xref", `0 ${offsets.length + 1}`, "0000000000 65535 f "];
  for (const at of offsets) xref.push(`${String(at).padStart(10, "0")} 00000 n `);
  push(Buffer.from(`${xref.join("\n")}\ntrailer\n<< /Size ${offsets.length + 1} /Root 1 0 R >>\nstartxref\n${offset}\n%%EOF\n`, "latin1"));
  return new Uint8Array(Buffer.concat(parts));
}
