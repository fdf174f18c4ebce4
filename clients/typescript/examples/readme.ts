import { createRegkbClient, uploadDocument, type SearchMatch } from "@regkb/client";

const regkb = createRegkbClient({ baseUrl: "http://127.0.0.1:8080", apiKey: "rk_live_…" });

// Every path, body field and response field is typed; a retry with the same key is never charged twice.
const { data, error } = await regkb.POST("/v1/search", {
  body: { query: "How quickly must a personal data breach be reported?", topK: 5 },
  params: { header: { "Idempotency-Key": crypto.randomUUID() } },
});
if (error) throw new Error(`${error.error}: ${error.details}`); // error.error is one of the documented codes
const matches: SearchMatch[] = data.results;
for (const match of matches) console.log(match.score.toFixed(3), match.citationPath, match.content.slice(0, 80));
console.log(`${data.availablePence} pence left`);

// Uploads are multipart; the helper builds the form from a Blob (a File in a browser).
export async function uploadPolicy(pdf: Blob): Promise<string> {
  const uploaded = await uploadDocument(regkb, { file: pdf, filename: "breach.pdf", jurisdictionSlugs: ["eu"] });
  if (uploaded.error) throw new Error(`${uploaded.error.error}: ${uploaded.error.details}`);
  return uploaded.data.id; // status "processing", then "ready": poll GET /v1/documents/{id}
}
