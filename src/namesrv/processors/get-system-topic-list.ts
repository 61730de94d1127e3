/**
 * GET_SYSTEM_TOPIC_LIST_FROM_NS (304): SUCCESS with body TopicList
 * `{"topicList":[<cluster names and broker names>],"brokerAddr":"<one broker>"}` (Apache; the
 * dashboard marks these topics as system topics).
 */
import type { RequestHandler } from '../../remoting/processor/request-processor.js';
import { createResponseCommand } from '../../remoting/protocol/commands.js';
import { ResponseCode } from '../../remoting/codes/response-code.js';
import type { NamesrvContext } from '../namesrv-context.js';

export function getSystemTopicListProcessor(ctx: NamesrvContext): RequestHandler {
  return ({ request }) => {
    const { topicList, brokerAddr } = ctx.routes.getSystemTopicList();
    const body = JSON.stringify(brokerAddr === null ? { topicList } : { brokerAddr, topicList });
    return createResponseCommand(request, ResponseCode.SUCCESS, null, null, Buffer.from(body, 'utf8'));
  };
}
