/**
 * `tsmq admin topic-list -n <host:port[;host:port]>`: every topic the nameserver knows, one per
 * line, sorted (mqadmin `topicList`, request code GET_ALL_TOPIC_LIST_FROM_NAMESERVER = 206).
 * System topics (TBW102, SCHEDULE_TOPIC_XXXX, …) are listed too, as brokers register them.
 * `--json`: `{"topicList":[…]}`.
 */
import type { Command } from 'commander';
import { RequestCode } from '../../remoting/codes/request-code.js';
import { addressList, adminCommand, invokeAdmin, parseFastjson, printJson, successBody, timeoutOf, withCommonOptions, withNamesrvOption, type CommonAdminOptions } from './admin-support.js';

export interface TopicListOptions extends CommonAdminOptions {
  namesrvAddr: string;
}

/** The sorted topic list of a GET_ALL_TOPIC_LIST_FROM_NAMESERVER body. @throws Error for another shape. */
export function topicListOf(body: Buffer): string[] {
  const parsed = parseFastjson(body.toString('utf8')) as { topicList?: unknown };
  if (!parsed || !Array.isArray(parsed.topicList) || parsed.topicList.some((t) => typeof t !== 'string')) throw new Error('the reply body has no topicList array');
  return [...(parsed.topicList as string[])].sort();
}

export async function runTopicList(opts: TopicListOptions): Promise<void> {
  const { addr, response } = await invokeAdmin(addressList(opts.namesrvAddr, 'nameserver'), RequestCode.GET_ALL_TOPIC_LIST_FROM_NAMESERVER, null, timeoutOf(opts));
  const topics = topicListOf(successBody(addr, response));
  if (opts.json) {
    printJson({ topicList: topics });
    return;
  }
  for (const t of topics) console.log(t);
}

export function registerAdminTopicList(program: Command): void {
  withCommonOptions(
    withNamesrvOption(adminCommand(program).command('topic-list').description('list every topic the nameserver knows (mqadmin topicList, request code 206)')),
  ).action(runTopicList);
}
