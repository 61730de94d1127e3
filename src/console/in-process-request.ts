/**
 * Runs a broker request handler in this process, as if a remoting client had sent the request,
 * so the console changes and reads state through exactly the code the request codes run
 * (BrokerController.handlerFor). The channel is a local one: server-initiated requests to it fail.
 */
import type { BrokerController } from '../broker/broker-controller.js';
import type { RemotingChannel } from '../remoting/processor/request-processor.js';
import type { RemotingCommand } from '../remoting/protocol/remoting-command.js';

let nextId = 1;

function consoleChannel(): RemotingChannel {
  return {
    remoteAddress: '127.0.0.1:0',
    id: `console-${nextId++}`,
    closed: false,
    send() {},
    close() {},
    onClose() {},
  };
}

/** The handler's response. @throws when the broker has no handler for the code or the handler answers nothing. */
export async function invokeInProcess(broker: BrokerController, request: RemotingCommand): Promise<RemotingCommand> {
  const handler = broker.handlerFor(request.code);
  if (!handler) throw new Error(`the broker has no handler for request code ${request.code}`);
  const response = await handler({ channel: consoleChannel(), request });
  if (!response) throw new Error(`request code ${request.code} gave no answer`);
  return response;
}
