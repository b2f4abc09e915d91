import { sqliteServer } from '../helpers/databases.js'
import { describeImport } from './import-suite.js'

describeImport('SQLite', sqliteServer, {
  operatorTable: `CREATE TABLE posts (id INTEGER PRIMARY KEY, slug TEXT NOT NULL UNIQUE,
    title TEXT NOT NULL CHECK (length(title) <= 20), content TEXT, category TEXT, featured BOOLEAN, extra JSON, published_at TEXT)`
})
