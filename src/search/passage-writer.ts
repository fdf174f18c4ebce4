/**
 * Where an organisation's document's passages are written: this node's own search index
 * (a single node, below), or PostgreSQL, the system of record, whose change log every
 * node's replica follows (replica/postgres-passage-writer.ts).
 */
import { deleteDocumentChunks, indexDocumentChunks, type DocumentChunksInput } from "./indexing";
import type { SearchIndex } from "./search-index";

export interface PassageWriter {
  /** Replaces the document's passages with these; an unchanged passage (same content hash) is left as it is. */
  indexDocumentChunks(input: DocumentChunksInput): Promise<void>;
  /** Removes every passage of the document. Synchronous: it runs inside a run's completion transaction. */
  deleteDocumentChunks(documentId: string): void;
  /** Resolves once this node's own index reflects every write made so far (after a deletion commits). */
  settled(): Promise<void>;
}

/** A single node: the passages go straight into its search index (indexing.ts). */
export class LocalPassageWriter implements PassageWriter {
  constructor(private readonly searchIndex: SearchIndex) {}

  indexDocumentChunks(input: DocumentChunksInput): Promise<void> {
    return indexDocumentChunks({ searchIndex: this.searchIndex }, input);
  }

  deleteDocumentChunks(documentId: string): void {
    deleteDocumentChunks({ searchIndex: this.searchIndex }, documentId);
  }

  async settled(): Promise<void> {}
}
