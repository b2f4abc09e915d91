import { postgresServer } from '../helpers/databases.js'
import { describePublishing } from './publishing-suite.js'
import { describeSchedule } from './schedule-suite.js'
import { describeDerivedAnswers } from './derived-answers-suite.js'
import { describeViews } from './view-suite.js'

describePublishing('PostgreSQL', postgresServer)
describeSchedule('PostgreSQL', postgresServer)
describeDerivedAnswers('PostgreSQL', postgresServer)
describeViews('PostgreSQL', postgresServer)
