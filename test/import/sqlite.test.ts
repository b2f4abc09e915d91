import { sqliteServer } from '../helpers/databases.js'
import { describeImport } from './import-suite.js'
import { describeImportTables } from './import-tables-suite.js'

describeImport('SQLite', sqliteServer)
describeImportTables('SQLite', sqliteServer, {
  operatorTable: `CREATE TABLE posts (id INTEGER PRIMARY KEY, slug TEXT NOT NULL UNIQUE,
    title TEXT NOT NULL CHECK (length(title) <= 20), content TEXT, category TEXT, featured BOOLEAN, extra JSON, published_at TEXT)`,
  // SQLite keeps any value in any column of an ordinary table: only NOT NULL refuses here.
  teamTable: `CREATE TABLE posts (id INTEGER PRIMARY KEY, slug TEXT NOT NULL UNIQUE, title TEXT NOT NULL, body_html TEXT NOT NULL, summary TEXT NOT NULL DEFAULT '',
    tags TEXT, status TEXT, lang TEXT NOT NULL, minutes INTEGER, published_at TEXT)`,
  teamRefusals: []
})
