import { sqliteServer } from '../helpers/databases.js'
import { describePublishing } from './publishing-suite.js'

describePublishing('SQLite', sqliteServer)
