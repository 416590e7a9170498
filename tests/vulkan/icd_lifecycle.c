/* The driver's life in a process: instances created and destroyed three times over (the loader
 * unloads the driver when the last instance goes and loads it again), then four threads at once,
 * each with its own instance and device, allocating, mapping and freeing memory.
 *   icd_lifecycle      prints one line per round and per thread; exit 0 when all succeeded */
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <vulkan/vulkan.h>

static int session(const char *who) {
    VkApplicationInfo app = {VK_STRUCTURE_TYPE_APPLICATION_INFO, NULL, "lifecycle", 1, NULL, 0, VK_API_VERSION_1_3};
    VkInstanceCreateInfo ici = {VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO, NULL, 0, &app};
    VkInstance inst;
    if (vkCreateInstance(&ici, NULL, &inst) != VK_SUCCESS) return 1;
    uint32_t n = 1;
    VkPhysicalDevice pd;
    if (vkEnumeratePhysicalDevices(inst, &n, &pd) != VK_SUCCESS || n != 1) return 1;
    float prio = 1.0f;
    VkDeviceQueueCreateInfo qci = {VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO, NULL, 0, 0, 1, &prio};
    VkDeviceCreateInfo dci = {VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO, NULL, 0, 1, &qci};
    VkDevice dev;
    if (vkCreateDevice(pd, &dci, NULL, &dev) != VK_SUCCESS) return 1;
    int bad = 0;
    for (int k = 0; k < 20; k++) {
        VkMemoryAllocateInfo mai = {VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO, NULL, 4096, 0};
        VkDeviceMemory mem;
        unsigned char *p;
        if (vkAllocateMemory(dev, &mai, NULL, &mem) != VK_SUCCESS) return 1;
        if (vkMapMemory(dev, mem, 0, VK_WHOLE_SIZE, 0, (void **)&p) != VK_SUCCESS) return 1;
        memset(p, k, 4096);
        bad += p[4095] != k;
        vkUnmapMemory(dev, mem);
        vkFreeMemory(dev, mem, NULL);
    }
    VkPhysicalDeviceProperties props;
    vkGetPhysicalDeviceProperties(pd, &props);
    printf("%s: %s\n", who, props.deviceName);
    vkDestroyDevice(dev, NULL);
    vkDestroyInstance(inst, NULL);
    return bad;
}

static void *worker(void *arg) {
    return (void *)(long)session((const char *)arg);
}

int main(void) {
    const char *rounds[] = {"round 0", "round 1", "round 2"};
    for (int r = 0; r < 3; r++)
        if (session(rounds[r])) return 1;
    const char *names[] = {"thread 0", "thread 1", "thread 2", "thread 3"};
    pthread_t t[4];
    for (int i = 0; i < 4; i++) pthread_create(&t[i], NULL, worker, (void *)names[i]);
    long failed = 0;
    for (int i = 0; i < 4; i++) {
        void *rc;
        pthread_join(t[i], &rc);
        failed += (long)rc;
    }
    return failed != 0;
}
