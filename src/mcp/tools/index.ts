import type { ToolSpec } from "../tool";
import { getBalanceTool, listDocumentsTool, listJurisdictionsTool } from "./account";
import { getProvision } from "./get-provision";
import { getScreeningTool, screenKeywords } from "./screenings";
import { searchRegulations } from "./search-regulations";

/** Every tool, in the order tools/list shows them. */
export const TOOLS: readonly ToolSpec[] = [
  searchRegulations,
  getProvision,
  screenKeywords,
  getScreeningTool,
  listJurisdictionsTool,
  getBalanceTool,
  listDocumentsTool,
];
