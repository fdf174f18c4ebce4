/**
 * The 21 real PDFs in ../shared/corpus/pdfs-real: exact page counts (poppler's pdfinfo
 * agrees; checked when these were written, so tests do not need poppler) and one
 * distinctive sentence from each, with the page it is on.
 */
import { join } from "node:path";

export const REAL_PDF_DIR = join(import.meta.dir, "..", "..", "..", "shared", "corpus", "pdfs-real");

export interface RealPdf {
  file: string;
  pages: number;
  page: number;
  sentence: string;
}

export const REAL_PDFS: RealPdf[] = [
  { file: "arizona_HB2363.pdf", pages: 6, page: 6, sentence: "This section only applies to paper records and paper documents." },
  { file: "guam_9gc048.pdf", pages: 5, page: 5, sentence: "Guidance on Response Programs for Unauthorized Access to Customer Information and Customer Notice" },
  { file: "indiana_TITLE24_AR4.9.pdf", pages: 10, page: 6, sentence: "delay is no longer necessary to restore the integrity of the computer system or to discover the scope of the breach" },
  { file: "indiana_TITLE4_AR1_ch11.pdf", pages: 3, page: 3, sentence: "the cost of providing the notice required under this chapter is at least two hundred fifty thousand dollars" },
  { file: "iowa_715c.pdf", pages: 3, page: 3, sentence: "provide greater protection to personal information and at least as thorough disclosure requirements" },
  { file: "kentucky_KRS_365.720.pdf", pages: 1, page: 1, sentence: "shall not mean a bank as defined in 12 U.S.C. sec. 1813(a)" },
  { file: "kentucky_KRS_365.725.pdf", pages: 1, page: 1, sentence: "by shredding, erasing, or otherwise modifying the personal information in those records to make it unreadable or indecipherable" },
  { file: "kentucky_KRS_365.730.pdf", pages: 1, page: 1, sentence: "The rights and remedies available under this section shall be cumulative to each other" },
  { file: "kentucky_KRS_365.732.pdf", pages: 2, page: 2, sentence: "the affected class of subject persons to be notified exceeds five hundred thousand" },
  { file: "kentucky_KRS_365.734.pdf", pages: 1, page: 1, sentence: "an educational institution with account-based access to online computing resources" },
  { file: "kentucky_KRS_61.931.pdf", pages: 2, page: 2, sentence: "A passport number or other identification number issued by the United States government" },
  { file: "kentucky_KRS_61.932.pdf", pages: 2, page: 2, sentence: "any agency that contracts with a nonaffiliated third party and that discloses personal information to the nonaffiliated third party" },
  { file: "kentucky_KRS_61.933.pdf", pages: 4, page: 4, sentence: "Personal information that is publicly and lawfully made available to the general public from federal, state, or local government records" },
  { file: "kentucky_KRS_61.934.pdf", pages: 1, page: 1, sentence: "The legislative and judicial branches of state government shall implement, maintain, and update reasonable security" },
  { file: "maine_title10ch210-B.pdf", pages: 8, page: 8, sentence: "All copyrights and other rights to statutory text are reserved by the State of Maine." },
  { file: "minnesota_325E.61.pdf", pages: 2, page: 2, sentence: "e-mail notice when the person or business has an e-mail address for the subject persons" },
  { file: "minnesota_325E.64.pdf", pages: 2, page: 2, sentence: "The financial institution is also entitled to recover costs for damages paid by the financial institution to cardholders" },
  { file: "north_dakota_t51c30.pdf", pages: 2, page: 2, sentence: "must be made after the law enforcement agency determines that the notification will not compromise the investigation" },
  { file: "utah_UT-13-44.pdf", pages: 4, page: 4, sentence: "The attorney general may inspect and copy all records related to the business conducted by the person" },
  { file: "washington_1078-S.SL_ignore.pdf", pages: 10, page: 10, sentence: "The notification must be written in plain language" },
  { file: "wisconsin_134.pdf", pages: 26, page: 26, sentence: "Failure to comply with this section is not negligence or a breach of any duty, but may be evidence of negligence" },
];
