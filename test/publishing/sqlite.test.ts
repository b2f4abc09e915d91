import { sqliteServer } from '../helpers/databases.js'
import { describePublishing } from './publishing-suite.js'
import { describeSchedule } from './schedule-suite.js'

describePublishing('SQLite', sqliteServer)
describeSchedule('SQLite', sqliteServer)
