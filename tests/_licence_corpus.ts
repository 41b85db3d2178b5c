/** Real prose for tests: the paragraphs of the licence texts that Debian ships in `/usr/share/common-licenses`. */

/** A paragraph of a licence, as a document. */
export interface LicenceParagraph {
  id: string;
  text: string;
  metadata: { licence: string; paragraph: number };
}

/** The paragraphs longer than 80 characters of each of `licences`, with ids like `GPL-3-007`. */
export function licenceParagraphs(licences: readonly string[]): LicenceParagraph[] {
  const docs: LicenceParagraph[] = [];
  for (const licence of licences) {
    const paragraphs = Deno.readTextFileSync(`/usr/share/common-licenses/${licence}`).split(/\n\s*\n/)
      .map((paragraph) => paragraph.replace(/\s+/g, " ").trim()).filter((paragraph) => paragraph.length > 80);
    paragraphs.forEach((text, i) => {
      docs.push({ id: `${licence}-${String(i).padStart(3, "0")}`, text, metadata: { licence, paragraph: i } });
    });
  }
  return docs;
}
