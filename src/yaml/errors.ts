/** An error of the Go YAML pipeline, with Go's message text. */
export class GoYamlError extends Error {
  /** 1-based line within the document text, when known. */
  line?: number;
  constructor(message: string, line?: number) {
    super(message);
    this.name = "GoYamlError";
    if (line !== undefined) this.line = line;
  }
}
