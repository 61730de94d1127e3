/**
 * gRPC FilterExpression → store filter, shared by ReceiveMessage, PullMessage and the Telemetry
 * settings check.
 *
 * - TAG (or unspecified): `*` / empty → everything; else tags as in the remoting protocol.
 * - SQL: with enablePropertyFilter=false → ILLEGAL_FILTER_EXPRESSION "SQL92 filter expressions
 *   are not supported (enablePropertyFilter=false)". With it on, the expression is compiled
 *   (cached) and filters the records like a remoting SQL92 pull; an empty or invalid expression
 *   → ILLEGAL_FILTER_EXPRESSION with the reason. (Apache's proxy lets the broker refuse a bad
 *   selector with SUBSCRIPTION_PARSE_FAILED, which it maps to INTERNAL_SERVER_ERROR; tsmq
 *   answers with the code meant for it.)
 */
import { buildSubscriptionData, createTagMessageFilter, SubscriptionParseError } from '../broker/filter/subscription-data.js';
import { compileFilterExpression, createSqlMessageFilter, ExpressionType, FilterCompileError } from '../broker/filter/expression-filter.js';
import type { MessageFilter } from '../store/message-store.js';
import { Code, status, type FilterExpression, type Status } from './proto/v2-types.js';

/** Checks a SQL expression (null when usable), without building a filter. */
export function checkSqlExpression(enabled: boolean, expression: string): Status | null {
  if (!enabled) return status(Code.ILLEGAL_FILTER_EXPRESSION, 'SQL92 filter expressions are not supported (enablePropertyFilter=false)');
  try {
    compileFilterExpression(ExpressionType.SQL92, expression);
    return null;
  } catch (e) {
    if (e instanceof FilterCompileError) return status(Code.ILLEGAL_FILTER_EXPRESSION, e.message);
    throw e;
  }
}

/** The store filter for a request's filter expression, null for "everything", or the refusal. */
export function messageFilterOf(enablePropertyFilter: boolean, topic: string, f: FilterExpression | null | undefined): MessageFilter | null | Status {
  if (f?.type === 'SQL') {
    const refused = checkSqlExpression(enablePropertyFilter, f.expression);
    if (refused) return refused;
    return createSqlMessageFilter(compileFilterExpression(ExpressionType.SQL92, f.expression));
  }
  if (!f || f.expression === '' || f.expression === '*') return null;
  try {
    return createTagMessageFilter(buildSubscriptionData(topic, f.expression));
  } catch (e) {
    if (e instanceof SubscriptionParseError) return status(Code.ILLEGAL_FILTER_EXPRESSION, e.message);
    throw e;
  }
}
