/**
 * Estimated tokens of what no text tokenizer can see, shared by the gateway's estimate and its tokenizer counts so
 * both count media alike.
 */

/**
 * Tokens of one image: Anthropic's figure for a large image (width x height / 750, capped near 1.15 megapixels). The
 * gateway does not decode images to size them.
 */
export const imageTokenEstimate = 1600;

const pdfBytesPerPage = 3000;
const pdfTokensPerPage = 1500;

/**
 * Tokens of a PDF: about 1,500 a page, its pages counted from its size (roughly 3 KB of PDF a page of text); a PDF
 * given by URL (`base64Data` undefined), whose size the gateway does not know, counts one page.
 */
export function estimatePdfTokens(base64Data: string | undefined): number {
  if (base64Data === undefined) return pdfTokensPerPage;
  const bytes = Math.floor((base64Data.length * 3) / 4);
  return Math.max(1, Math.ceil(bytes / pdfBytesPerPage)) * pdfTokensPerPage;
}
