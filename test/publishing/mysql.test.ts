import { mysqlServer } from '../helpers/databases.js'
import { describePublishing } from './publishing-suite.js'
import { describeSchedule } from './schedule-suite.js'
import { describeDerivedAnswers } from './derived-answers-suite.js'
import { describeViews } from './view-suite.js'

describePublishing('MySQL/MariaDB', mysqlServer)
describeSchedule('MySQL/MariaDB', mysqlServer)
describeDerivedAnswers('MySQL/MariaDB', mysqlServer)
describeViews('MySQL/MariaDB', mysqlServer)
