// Reference for server.test.ts: how Minecraft reads server.properties (formats.md section 2).
// Usage: java PropertiesDump.java <file>...   (single-file source launch, Java 11+)
// For each file: its bytes decoded as strict UTF-8, or on a malformed byte the whole file as ISO-8859-1
// (Settings.loadFromFile since 1.20-pre1), then java.util.Properties.load through a StringReader.
// Prints one JSON array with one object per file ({key: value}), or the string "error" when load throws.

import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.io.StringReader;
import java.util.Map;
import java.util.Properties;
import java.util.TreeMap;

public class PropertiesDump {
  /** A JSON string with everything outside printable ASCII as \\uXXXX (surrogate pairs stay two escapes). */
  static String quote(String s) {
    StringBuilder b = new StringBuilder("\"");
    for (char c : s.toCharArray()) {
      if (c == '"' || c == '\\') b.append('\\').append(c);
      else if (c < 0x20 || c > 0x7e) b.append(String.format("\\u%04x", (int) c));
      else b.append(c);
    }
    return b.append('"').toString();
  }

  static String decode(byte[] bytes) {
    try {
      return StandardCharsets.UTF_8.newDecoder()
          .onMalformedInput(CodingErrorAction.REPORT)
          .onUnmappableCharacter(CodingErrorAction.REPORT)
          .decode(ByteBuffer.wrap(bytes)).toString();
    } catch (CharacterCodingException e) {
      return new String(bytes, StandardCharsets.ISO_8859_1);
    }
  }

  static String dump(byte[] bytes) {
    Properties properties = new Properties();
    try {
      properties.load(new StringReader(decode(bytes)));
    } catch (Exception e) {
      return "\"error\"";
    }
    TreeMap<String, String> sorted = new TreeMap<>();
    for (String key : properties.stringPropertyNames()) sorted.put(key, properties.getProperty(key));
    StringBuilder out = new StringBuilder("{");
    for (Map.Entry<String, String> entry : sorted.entrySet()) {
      if (out.length() > 1) out.append(',');
      out.append(quote(entry.getKey())).append(':').append(quote(entry.getValue()));
    }
    return out.append('}').toString();
  }

  public static void main(String[] args) throws Exception {
    StringBuilder out = new StringBuilder("[");
    for (int i = 0; i < args.length; i++) {
      if (i > 0) out.append(',');
      out.append(dump(Files.readAllBytes(Paths.get(args[i]))));
    }
    System.out.println(out.append(']'));
  }
}
