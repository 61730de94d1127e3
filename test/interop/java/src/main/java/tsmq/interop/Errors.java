package tsmq.interop;

import org.apache.rocketmq.client.exception.MQBrokerException;
import org.apache.rocketmq.client.exception.MQClientException;
import org.apache.rocketmq.remoting.exception.RemotingException;
import tsmq.interop.common.Json;

/** Prints an operation's failure as {"type":"error","op":...,"code":responseCode,...}. */
final class Errors {
    static void print(String op, Throwable t) {
        Throwable root = t;
        while (root.getCause() != null && !(root instanceof MQBrokerException) && !(root instanceof MQClientException && ((MQClientException) root).getResponseCode() > 0)) {
            root = root.getCause();
        }
        Integer code = null;
        String message = root.getMessage();
        if (root instanceof MQBrokerException) {
            code = ((MQBrokerException) root).getResponseCode();
            message = ((MQBrokerException) root).getErrorMessage();
        } else if (root instanceof MQClientException && ((MQClientException) root).getResponseCode() > 0) {
            code = ((MQClientException) root).getResponseCode();
            message = ((MQClientException) root).getErrorMessage();
        }
        String first = message == null ? "" : message.split("\n")[0];
        if (first.length() > 300) first = first.substring(0, 300);
        Json.obj().put("type", "error").put("op", op).put("class", root.getClass().getSimpleName())
            .put("code", code).put("remoting", root instanceof RemotingException).put("message", first).println();
    }
}
