package tsmq.interop;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.TreeSet;
import org.apache.rocketmq.remoting.RPCHook;
import org.apache.rocketmq.remoting.protocol.RemotingCommand;
import tsmq.interop.common.Json;

/**
 * RPCHook that records every request code the Java client sends (to the nameserver or the
 * broker), the header field names, the request versions (MQVersion ordinals) and every response
 * code/remark it got back. Printed as
 * {"type":"rpc",...} lines so the TS test can list request codes tsmq answers wrongly.
 */
final class RecordingHook implements RPCHook {
    static final class Stat {
        int sent;
        int oneway;
        final TreeSet<String> fields = new TreeSet<>();
        final TreeSet<String> targets = new TreeSet<>();
        final TreeSet<Integer> versions = new TreeSet<>();
        final Map<Integer, Integer> responses = new TreeMap<>();
        final List<String> remarks = new ArrayList<>();
    }

    private final Map<Integer, Stat> stats = new TreeMap<>();

    @Override
    public synchronized void doBeforeRequest(String remoteAddr, RemotingCommand request) {
        Stat s = stats.computeIfAbsent(request.getCode(), k -> new Stat());
        s.sent++;
        if (request.isOnewayRPC()) s.oneway++;
        s.versions.add(request.getVersion());
        try {
            request.makeCustomHeaderToNet();
        } catch (RuntimeException ignored) {
            // header without fields
        }
        if (request.getExtFields() != null) s.fields.addAll(request.getExtFields().keySet());
        if (remoteAddr != null) s.targets.add(remoteAddr);
    }

    @Override
    public synchronized void doAfterResponse(String remoteAddr, RemotingCommand request, RemotingCommand response) {
        Stat s = stats.computeIfAbsent(request.getCode(), k -> new Stat());
        if (request.getExtFields() != null) s.fields.addAll(request.getExtFields().keySet());
        if (response == null) {
            s.responses.merge(-1, 1, Integer::sum);
            return;
        }
        s.responses.merge(response.getCode(), 1, Integer::sum);
        if (response.getCode() != 0 && response.getRemark() != null && s.remarks.size() < 3
            && !s.remarks.contains(response.getRemark())) {
            s.remarks.add(response.getRemark());
        }
    }

    synchronized void print(String scenario) {
        for (Map.Entry<Integer, Stat> e : stats.entrySet()) {
            Stat s = e.getValue();
            Map<String, Integer> responses = new TreeMap<>();
            s.responses.forEach((k, v) -> responses.put(String.valueOf(k), v));
            Json.obj().put("type", "rpc").put("scenario", scenario).put("code", e.getKey()).put("sent", s.sent)
                .put("oneway", s.oneway).put("responses", responses).put("remarks", s.remarks)
                .put("fields", new ArrayList<>(s.fields)).put("targets", new ArrayList<>(s.targets))
                .put("versions", new ArrayList<>(s.versions)).println();
        }
    }
}
