import { sqliteServer } from '../helpers/databases.js'
import { describePublishing } from './publishing-suite.js'
import { describeSchedule } from './schedule-suite.js'
import { describeDerivedAnswers } from './derived-answers-suite.js'
import { describeViews } from './view-suite.js'

describePublishing('SQLite', sqliteServer)
describeSchedule('SQLite', sqliteServer)
describeDerivedAnswers('SQLite', sqliteServer)
describeViews('SQLite', sqliteServer)
