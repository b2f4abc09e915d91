import { sqliteServer } from '../helpers/databases.js'
import { describeStoreContract } from './store-contract.js'

describeStoreContract('SQLite', sqliteServer, {
  normalisationTable: [
    `CREATE TABLE posts (id INTEGER PRIMARY KEY, slug TEXT NOT NULL UNIQUE, title TEXT, published_at TEXT,
      is_draft BOOLEAN, meta JSON, bad_meta JSON, note TEXT, views INTEGER, rating REAL, cover BLOB)`,
    `INSERT INTO posts VALUES (9007199254740993, 'first-post', 'First', '2024-01-02 03:04:05', 1,
      '{"a":[1,2],"b":null}', 'not json', NULL, 42, 1.5, X'DEADBEEF')`,
    "INSERT INTO posts (id, slug, is_draft) VALUES (2, 'second-post', 0)"
  ],
  expectedFirstPost: {
    id: '9007199254740993',
    slug: 'first-post',
    title: 'First',
    published_at: '2024-01-02 03:04:05', // SQLite text timestamps are served as stored
    is_draft: true,
    meta: { a: [1, 2], b: null },
    bad_meta: 'not json',
    note: null,
    views: 42,
    rating: 1.5
  },
  timestamp: (iso) => `'${new Date(iso).toISOString()}'`
})
