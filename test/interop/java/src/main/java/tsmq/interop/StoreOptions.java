package tsmq.interop;

import java.nio.file.Files;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;
import org.apache.rocketmq.common.BrokerConfig;
import org.apache.rocketmq.store.DefaultMessageStore;
import org.apache.rocketmq.store.config.FlushDiskType;
import org.apache.rocketmq.store.config.MessageStoreConfig;

/**
 * Command-line options shared by the Apache 4.9.8 store peers:
 * {@code --cl <commitLogFileBytes> --cq <consumeQueueFileBytes> [--slots n --index n]
 * [--queries file] [--times file]}.
 */
final class StoreOptions {
    int commitLogSize = 64 * 1024;
    int consumeQueueSize = 20 * 100;
    int maxHashSlotNum = -1;
    int maxIndexNum = -1;
    int from = 0;
    boolean longTopics = false;
    String queriesFile;
    String timesFile;
    final List<String> positional = new ArrayList<>();

    static StoreOptions parse(String[] args) {
        StoreOptions o = new StoreOptions();
        for (int k = 0; k < args.length; k++) {
            switch (args[k]) {
                case "--cl": o.commitLogSize = Integer.parseInt(args[++k]); break;
                case "--cq": o.consumeQueueSize = Integer.parseInt(args[++k]); break;
                case "--slots": o.maxHashSlotNum = Integer.parseInt(args[++k]); break;
                case "--index": o.maxIndexNum = Integer.parseInt(args[++k]); break;
                case "--long-topic": o.longTopics = true; break;
                case "--from": o.from = Integer.parseInt(args[++k]); break;
                case "--queries": o.queriesFile = args[++k]; break;
                case "--times": o.timesFile = args[++k]; break;
                default: o.positional.add(args[k]);
            }
        }
        return o;
    }

    MessageStoreConfig config(String dir) {
        MessageStoreConfig c = new MessageStoreConfig();
        c.setStorePathRootDir(dir);
        c.setStorePathCommitLog(Paths.get(dir, "commitlog").toString());
        c.setMappedFileSizeCommitLog(commitLogSize);
        c.setMappedFileSizeConsumeQueue(consumeQueueSize);
        if (maxHashSlotNum > 0) c.setMaxHashSlotNum(maxHashSlotNum);
        if (maxIndexNum > 0) c.setMaxIndexNum(maxIndexNum);
        c.setFlushDiskType(FlushDiskType.ASYNC_FLUSH);
        c.setHaListenPort(0);
        c.setDiskFallRecorded(false);
        return c;
    }

    DefaultMessageStore open(String dir) throws Exception {
        Files.createDirectories(Paths.get(dir));
        DefaultMessageStore store = new DefaultMessageStore(config(dir), null,
            (topic, queueId, logicOffset, tagsCode, msgStoreTime, filterBitMap, properties) -> { }, new BrokerConfig());
        boolean loaded = store.load();
        if (!loaded) throw new IllegalStateException("Apache DefaultMessageStore.load() returned false for " + dir);
        store.start();
        return store;
    }

    static List<String[]> readTsv(String file) throws Exception {
        List<String[]> rows = new ArrayList<>();
        if (file == null) return rows;
        for (String line : Files.readAllLines(Paths.get(file))) {
            if (!line.isEmpty()) rows.add(line.split("\t"));
        }
        return rows;
    }
}
