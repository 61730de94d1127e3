package tsmq.interop;

import org.apache.rocketmq.client.exception.MQBrokerException;
import org.apache.rocketmq.client.exception.MQClientException;

/** What a 4.x client's exception says, for the peers that print refusals (AclPeer4, AclV1Peer4, Upgrade49Peer). */
final class ClientErrors {
    private ClientErrors() {}

    /** The broker's response code in the cause chain (MQBrokerException, or an MQClientException carrying one), else -1. */
    static int codeOf(Throwable t) {
        for (Throwable c = t; c != null; c = c.getCause()) {
            if (c instanceof MQBrokerException) return ((MQBrokerException) c).getResponseCode();
            if (c instanceof MQClientException && ((MQClientException) c).getResponseCode() > 0) return ((MQClientException) c).getResponseCode();
        }
        return -1;
    }

    /** Every message of the cause chain, each followed by " | ". */
    static String messageOf(Throwable t) {
        StringBuilder sb = new StringBuilder();
        for (Throwable c = t; c != null; c = c.getCause()) sb.append(c.getMessage()).append(" | ");
        return sb.toString();
    }
}
