/**
 * UPDATE_COLD_DATA_FLOW_CTR_CONFIG (2001) bodies are Java Properties text: a body Properties.load
 * refuses (a malformed \uXXXX escape) is answered SYSTEM_ERROR "string2Properties error" as Apache's
 * AdminBrokerProcessor does, and changes nothing; a good body updates the group table.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { ColdDataFlowCtrProcessors } from '../../../src/broker/processors/cold-data-flow-ctr-processor.js';
import { createRequestCommand } from '../../../src/remoting/protocol/commands.js';
import { ResponseCode } from '../../../src/remoting/codes/response-code.js';
import type { RequestContext } from '../../../src/remoting/processor/request-processor.js';

const ctxOf = (body: string): RequestContext => ({ request: createRequestCommand(2001, null, Buffer.from(body, 'utf8')) }) as unknown as RequestContext;

describe('cold data flow control group config (2001)', () => {
  it('a malformed \\u escape is SYSTEM_ERROR string2Properties error and keeps the table', async () => {
    const warnings: string[] = [];
    const p = new ColdDataFlowCtrProcessors(() => new Map(), { warn: (m) => warnings.push(m) });
    const ok = await p.updateGroupConfig(ctxOf('g1=100\n'));
    assert.equal(ok!.code, ResponseCode.SUCCESS);
    const bad = await p.updateGroupConfig(ctxOf('g2=5\\uZZ12\n'));
    assert.equal(bad!.code, ResponseCode.SYSTEM_ERROR);
    assert.equal(bad!.remark, 'string2Properties error');
    assert.equal(warnings.length, 1);
    const info = JSON.parse((await p.getInfo(ctxOf('')))!.body!.toString('utf8'));
    const text = JSON.stringify(info);
    assert.match(text, /g1/);
    assert.doesNotMatch(text, /g2/);
  });
});
