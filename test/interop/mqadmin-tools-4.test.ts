/**
 * Apache mqadmin from rocketmq-tools 4.9.8 (MQAdminStartup, all everyday commands in one JVM)
 * against `tsmq start`; see test/interop/mqadmin/mqadmin-suite.ts. Skips without java/mvn.
 */
import { defineMqadminSuite } from './mqadmin/mqadmin-suite.js';

defineMqadminSuite(4);
