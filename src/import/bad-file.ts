// A Markdown file the import skips: its reason is printed after its path, one line per file.

export class BadFileError extends Error {
  constructor (reason: string) {
    super(reason)
    this.name = 'BadFileError'
  }
}
