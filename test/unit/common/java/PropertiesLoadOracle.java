import java.io.*;
import java.nio.charset.StandardCharsets;
import java.nio.file.*;
import java.util.*;

/**
 * Test oracle for properties-text-java-diff.test.ts: each input line is "R <base64 UTF-8 text>"
 * (Properties.load(Reader)) or "S <base64 bytes>" (Properties.load(InputStream), ISO-8859-1 as
 * Apache's BrokerStartup and MixAll.string2Properties read). Each output line is "ERR" or "OK"
 * followed by " base64(key),base64(value)" per entry, sorted by key (String.compareTo).
 */
public class PropertiesLoadOracle {
  public static void main(String[] args) throws Exception {
    Base64.Decoder dec = Base64.getDecoder();
    Base64.Encoder enc = Base64.getEncoder();
    StringBuilder out = new StringBuilder();
    for (String line : Files.readAllLines(Paths.get(args[0]), StandardCharsets.US_ASCII)) {
      byte[] raw = dec.decode(line.substring(2));
      Properties p = new Properties();
      try {
        if (line.charAt(0) == 'R') p.load(new StringReader(new String(raw, StandardCharsets.UTF_8)));
        else p.load(new ByteArrayInputStream(raw));
      } catch (IllegalArgumentException e) {
        out.append("ERR\n");
        continue;
      }
      List<String> keys = new ArrayList<>(p.stringPropertyNames());
      Collections.sort(keys);
      out.append("OK");
      for (String k : keys) {
        out.append(' ').append(enc.encodeToString(k.getBytes(StandardCharsets.UTF_8)))
           .append(',').append(enc.encodeToString(p.getProperty(k).getBytes(StandardCharsets.UTF_8)));
      }
      out.append('\n');
    }
    Files.write(Paths.get(args[1]), out.toString().getBytes(StandardCharsets.US_ASCII));
  }
}
