// Which keys Kafka's own broker configuration knows (with their defaults), and what
// java.util.Properties (the loader Kafka uses for server.properties) keeps when a key
// repeats. Run with Kafka's jars:  java -cp 'libs/*' KafkaKeys.java <properties file> <key>...
import java.io.FileReader;
import java.util.Properties;

public class KafkaKeys {
    public static void main(String[] args) throws Exception {
        var keys = kafka.server.KafkaConfig.configDef().configKeys();
        for (int i = 1; i < args.length; i++) {
            var key = keys.get(args[i]);
            System.out.println(key == null ? "unknown " + args[i]
                                           : "known " + args[i] + " default=" + key.defaultValue);
        }
        var p = new Properties();
        try (var r = new FileReader(args[0])) { p.load(r); }
        for (String k : p.stringPropertyNames()) System.out.println("effective " + k + "=" + p.getProperty(k));
    }
}
